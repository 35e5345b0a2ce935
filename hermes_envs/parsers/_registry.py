"""The parser registry: names -> parser classes, on the shared :class:`hermes_envs._registry.Registry`.

One duplicate-name rule for the whole package (see :mod:`hermes_envs._registry`): a name is taken once, the same
class imported again (same source file and ``__qualname__``) replaces itself, any other owner is an error naming both.
Tests use ``PARSERS.isolated()``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

from hermes_envs._definitions import Site, definition_site, where
from hermes_envs._registry import Registry
from hermes_envs.parsers._base import ToolCallParser
from hermes_envs.parsers._errors import ParserRegistrationError, UnknownParserError

__all__ = ["PARSERS", "get_parser", "list_parsers", "register_parser"]

#: Every registered parser class by name (aliases included).
PARSERS: Registry[type[ToolCallParser]] = Registry(
    "tool-call parser", error=ParserRegistrationError, unknown_error=UnknownParserError
)

_P = TypeVar("_P", bound=type[ToolCallParser])


def _describe(cls: type[ToolCallParser], site: Site | None) -> str:
    return where(cls)


def register_parser(*names: str) -> Callable[[_P], _P]:
    """Class decorator registering a :class:`ToolCallParser` under one or more names.

    The first name becomes ``cls.name`` (unless the class sets one); further names, or stacked decorators, are
    aliases. Registering a name that is taken raises :class:`ParserRegistrationError` naming the owner, unless the
    owner is the same class imported again (same source file and ``__qualname__``, e.g. the env module imported under
    a second name): the newer class then replaces it. Nothing is registered when any name clashes.
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ParserRegistrationError(
            f"register_parser should be given one or more non-empty names; got {names!r}. "
            'Fix: write @register_parser("my_format").'
        )

    def decorate(cls: _P) -> _P:
        if not (isinstance(cls, type) and issubclass(cls, ToolCallParser)):
            raise ParserRegistrationError(
                f"register_parser should decorate a ToolCallParser subclass; got {cls!r}. "
                "Fix: subclass hermes_envs.parsers.ToolCallParser."
            )
        # A class with no methods of its own, in a module missing from sys.modules, has no file to find: the
        # code applying the decorator is then the class's own module.
        site = definition_site(cls, sys._getframe(1).f_code.co_filename)
        for n in names:  # check every name first: a clash registers none of them
            owner = PARSERS.find(n)
            if owner is None or owner is cls:
                continue
            owner_site = PARSERS.site(n) or definition_site(owner)
            if site is not None and site == owner_site:
                continue
            same_file = site is not None and owner_site is not None and site[0] == owner_site[0]
            fix = (
                f"register {n!r} on only one of {owner.__qualname__} and {cls.__qualname__} in that file."
                if same_file
                else "choose another name."
            )
            PARSERS.register(
                n, cls, site=site, describe=_describe, fix=fix
            )  # raises: the shared rule's message
        for n in names:
            owner = PARSERS.find(n)
            if owner is not None and owner is not cls:
                PARSERS.unregister(n)  # the same definition imported again: the newer class replaces it
            PARSERS.register(n, cls, site=site, describe=_describe)
        if not cls.__dict__.get("name"):
            cls.name = names[0]
        return cls

    return decorate


def get_parser(name: str) -> ToolCallParser:
    """Return a new instance of the parser registered as ``name``; ``KeyError`` lists the known names."""
    return PARSERS.get(name)()


def list_parsers() -> list[str]:
    """Every registered name (aliases included), sorted."""
    return PARSERS.names()
