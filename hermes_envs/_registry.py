"""One small name -> object registry with one duplicate-name rule, shared by every registry in the package.

Parsers, tools, sandbox backends, toolset distributions, fake-server policies and conformance checks are all "a
global table of names an author can add to". They share one rule: a name is taken once; the *same definition*
registered again (same source file and ``__qualname__``, see :mod:`hermes_envs._definitions`: an env module imported
a second time under another module name) replaces the earlier entry silently; any other owner is an error that names
both owners and how to fix it. Tests use :meth:`Registry.isolated` instead of patching private dicts.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from hermes_envs._definitions import Site, where
from hermes_envs.errors import HermesEnvsError, RegistryError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Names mapped to objects of one kind (``kind`` is used in messages: "parser", "tool", ...).

    ``error`` is the exception raised on a clash (a subclass of :class:`RegistryError` fitting the kind);
    ``unknown_error`` the one raised by :meth:`get` for a name nobody registered (default: ``KeyError`` subclass
    :class:`~hermes_envs.errors.UnknownNameError`).
    """

    def __init__(
        self,
        kind: str,
        *,
        error: type[HermesEnvsError] = RegistryError,
        unknown_error: type[Exception] | None = None,
        unknown_fix: str = "",
    ) -> None:
        from hermes_envs.errors import UnknownNameError

        self.kind = kind
        self._error = error
        self._unknown_error = unknown_error or UnknownNameError
        self._unknown_fix = unknown_fix
        self._items: dict[str, T] = {}
        self._sites: dict[str, Site | None] = {}
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<Registry of {self.kind}s: {', '.join(self.names()) or 'empty'}>"

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def register(
        self,
        name: str,
        obj: T,
        *,
        site: Site | None = None,
        describe: Callable[[T, Site | None], str] | None = None,
        fix: str | None = None,
    ) -> T:
        """Add ``obj`` under ``name``; the same definition (equal, non-None ``site``) again replaces it.

        ``describe(obj, site)`` words an owner in the clash message (default: the site's qualname and file);
        ``fix`` overrides the default advice ("choose another name", or "register it once in that file" when both
        owners live in one file).
        """
        if not isinstance(name, str) or not name:
            raise self._error(f"a {self.kind} name should be a non-empty string; got {name!r}.")
        with self._lock:
            if name in self._items:
                owner, owner_site = self._items[name], self._sites.get(name)
                same = owner is obj or (site is not None and site == owner_site)
                if not same:
                    words = describe or _describe
                    if fix is None:
                        same_file = site is not None and owner_site is not None and site[0] == owner_site[0]
                        fix = (
                            f"register {name!r} only once in that file."
                            if same_file
                            else "choose another name for one of them, or unregister the first."
                        )
                    raise self._error(
                        f"{self.kind} name {name!r} should be unique; it is already registered by "
                        f"{words(owner, owner_site)} and again by {words(obj, site)}. Fix: {fix}"
                    )
            self._items[name] = obj  # a replaced definition keeps its first place in the order
            self._sites[name] = site
        return obj

    def replace(self, name: str, obj: T) -> T:
        """Put ``obj`` in the place of the existing entry ``name`` (a caller that applied its own same-definition
        rule); an unknown name raises like :meth:`get`."""
        with self._lock:
            if name not in self._items:
                raise self._unknown(name)
            self._items[name] = obj
        return obj

    def unregister(self, name: str) -> T:
        """Remove and return the entry ``name``; an unknown name raises like :meth:`get`."""
        with self._lock:
            if name not in self._items:
                raise self._unknown(name)
            self._sites.pop(name, None)
            return self._items.pop(name)

    def get(self, name: str) -> T:
        """The object registered as ``name``; an unknown name raises, listing the known names and a close match."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise self._unknown(name) from None

    def find(self, name: str) -> T | None:
        """The object registered as ``name``, or None."""
        return self._items.get(name)

    def site(self, name: str) -> Site | None:
        """Where the entry ``name`` was defined, as given to :meth:`register`."""
        return self._sites.get(name)

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        """(name, object) pairs in registration order."""
        return list(self._items.items())

    def values(self) -> list[T]:
        """The registered objects in registration order."""
        return list(self._items.values())

    @contextmanager
    def isolated(self) -> Iterator[Registry[T]]:
        """Within the block, registrations and removals are undone on exit (for tests)."""
        with self._lock:
            items, sites = dict(self._items), dict(self._sites)
        try:
            yield self
        finally:
            with self._lock:
                self._items, self._sites = items, sites

    def _unknown(self, name: object) -> Exception:
        known = self.names()
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        fix = f" Fix: {self._unknown_fix}" if self._unknown_fix else ""
        return self._unknown_error(
            f"{self.kind} {name!r} should be one of the registered names; got an unknown name.{hint} "
            f"Available: {', '.join(known) or '(none)'}.{fix}"
        )


def _describe(obj: object, site: Site | None) -> str:
    if site is not None:
        return f"{site[1]} in {site[0]}"
    return where(obj)
