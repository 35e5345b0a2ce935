"""Where a function or class was defined, so registries can tell a re-import from a genuine name clash.

The same env file can be imported twice in one process under two module names: ``pytest --hermes-conformance
my_env.py`` imports it under a private name while the author's own test does ``from my_env import ...``. Every
module-level ``@register_parser`` / ``@tool`` / ``register_distribution`` then runs twice with a new object of the
same definition. The registries treat "same source file and same ``__qualname__``" as the same definition and let the
latest one replace the earlier, silently; any other owner of the name is still an error.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

__all__ = ["Site", "definition_site", "same_definition", "same_file", "where"]

Site = tuple[str, str]  # (real path of the source file, __qualname__)


def _real(path: str | None) -> str | None:
    if not path or path.startswith("<"):  # "<stdin>", "<string>": no file to compare
        return None
    return os.path.realpath(path)


def _code_file(obj: Any) -> str | None:
    func = inspect.unwrap(obj) if callable(obj) else obj
    if isinstance(func, (staticmethod, classmethod)):
        func = func.__func__
    if isinstance(func, property):
        func = func.fget
    code = getattr(func, "__code__", None)
    return _real(code.co_filename) if code is not None else None


def _class_file(cls: type) -> str | None:
    # The code of the class's own methods knows its file even when the module is not (or no longer) in
    # sys.modules, which inspect.getfile needs for a class.
    own = cls.__qualname__ + "."
    for member in vars(cls).values():
        qualname = getattr(member, "__qualname__", own)
        if isinstance(qualname, str) and not qualname.startswith(own):
            continue  # not written in the class body (a function set on it later, e.g. a parser's fast parse)
        path = _code_file(member)
        if path is not None:
            return path
    try:
        return _real(inspect.getsourcefile(cls) or inspect.getfile(cls))
    except (TypeError, OSError):
        return None


def definition_site(obj: Any, fallback_file: str | None = None) -> Site | None:
    """``(source file, __qualname__)`` of a function or class; None when either cannot be known.

    ``fallback_file`` is used when the file cannot be found from ``obj`` itself (a class with no methods of its
    own whose module is not in ``sys.modules``).
    """
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(qualname, str):
        return None
    path = _class_file(obj) if isinstance(obj, type) else _code_file(obj)
    if path is None and fallback_file is not None:
        path = _real(fallback_file)
    if path is None:
        try:
            path = _real(inspect.getsourcefile(obj) or inspect.getfile(obj))
        except (TypeError, OSError):
            return None
    return (path, qualname) if path else None


def same_definition(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are the same object, or the same definition imported twice (file and qualname)."""
    if a is b:
        return True
    site = definition_site(a)
    return site is not None and site == definition_site(b)


def same_file(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` were both defined in one known source file."""
    sa, sb = definition_site(a), definition_site(b)
    return sa is not None and sb is not None and sa[0] == sb[0]


def where(obj: Any) -> str:
    """``module.qualname`` of ``obj``, for messages; ``repr(obj)`` when it has no module or qualified name."""
    module = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    return f"{module}.{qual}" if module and qual else repr(obj)
