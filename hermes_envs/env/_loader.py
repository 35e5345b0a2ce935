"""Import an environment file the way ``python env.py`` would, and find its environment classes.

Import failures become one :class:`EnvLoadError` with a message for the author (file, line, what failed, the fix)
instead of a traceback wall.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from types import ModuleType

from hermes_envs.errors import EnvLoadError

#: Upstream-layout re-export modules: never environments themselves.
_LAYOUT_MODULES = {
    "hermes_base_env.py",
    "agent_loop.py",
    "tool_context.py",
    "tool_call_parsers.py",
    "__init__.py",
}


def looks_like_env_file(path: Path) -> bool:
    """Cheap test (no import) for folder collection: a .py file defining a class whose base name ends in 'Env'."""
    if (
        path.suffix != ".py"
        or path.name in _LAYOUT_MODULES
        or path.name.startswith(("test_", "conftest", "_"))
    ):
        return False
    return defines_env_class(path)


def defines_env_class(path: Path) -> bool:
    """Cheap test (no import) of any .py file: it defines a class whose base name ends in 'Env' (or does not parse,
    so the import check can say why). A named file that fails it holds no environment."""
    if path.suffix != ".py":
        return False
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return True  # let the import check report the syntax error
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name.endswith("Env"):
                    return True
    return False


def _frame_in(tb_exc: traceback.TracebackException, path: Path) -> str:
    """'line N: <code>' of the deepest frame inside the env file, so the author sees their own line."""
    for frame in reversed(tb_exc.stack):
        if Path(frame.filename).resolve() == path:
            return f"line {frame.lineno}: {(frame.line or '').strip()}"
    return ""


def import_env_module(path: str | Path) -> ModuleType:
    """Import ``path`` as a fresh module with its folder on ``sys.path`` (as ``python path`` does)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise EnvLoadError(f"{path} should be an environment file; it does not exist. Fix: check the path.")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    module_name = f"hermes_conformance_{path.stem}_{digest}"
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EnvLoadError(f"{path} could not be loaded as a Python module. Fix: give it a .py name.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        line = (exc.text or "").rstrip("\n")
        caret = " " * max(0, (exc.offset or 1) - 1) + "^"
        raise EnvLoadError(
            f"{path.name} should be valid Python; got a syntax error at line {exc.lineno}: {exc.msg}\n"
            f"    {line}\n    {caret}\nFix: correct the syntax at that line."
        ) from None
    except ModuleNotFoundError as exc:
        sys.modules.pop(module_name, None)
        where = _frame_in(traceback.TracebackException.from_exception(exc), path)
        missing = exc.name or str(exc)
        hint = _missing_module_hint(missing)
        raise EnvLoadError(
            f"{path.name} should import offline; importing module {missing!r} failed ({where or 'at import'}).\n"
            f"Fix: {hint}"
        ) from None
    except BaseException as exc:  # the author's module may raise anything at import time
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        where = _frame_in(traceback.TracebackException.from_exception(exc), path)
        network = "network" in type(exc).__name__.lower() or "NetworkBlocked" in type(exc).__name__
        fix = (
            "do not reach the network at import time; load data in setup() with a built-in fallback."
            if network
            else "make the module import without side effects; move work into setup()."
        )
        raise EnvLoadError(
            f"{path.name} should import cleanly; importing it raised {type(exc).__name__}: {exc} "
            f"({where or 'at import'}).\nFix: {fix}"
        ) from None
    return module


#: Top-level packages whose upstream-layout modules hermes-envs ships (some of them: not every upstream module).
_LAYOUT_PACKAGES = ("environments", "tools")


def _missing_module_hint(missing: str) -> str:
    """The fix for an import of ``missing`` that failed: name the real cause.

    A submodule of a package hermes-envs provides (``environments.council_evaluator``) is a module hermes-envs does
    not provide, not a sign that hermes-envs is missing; only the package itself missing means "install it".
    """
    top, _, rest = missing.partition(".")
    if top not in _LAYOUT_PACKAGES:
        return f"install the package that provides {missing!r}, or fix the import name."
    try:
        provided = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        provided = False
    if not provided or not rest:
        return "The upstream-layout modules come with hermes-envs: install it (pip install hermes-envs) in this Python."
    return (
        f"hermes-envs provides the upstream layout's {top!r} package but not {missing!r} (an upstream hermes-agent "
        "module it does not ship). Install hermes-agent in this Python to use it, or remove that import."
    )


def find_env_classes(module: ModuleType) -> list[type]:
    """atroposlib ``BaseEnv`` subclasses defined in ``module`` (imported bases are not counted).

    Concrete classes when there are any; otherwise the abstract ones, so the method checks can say what is missing.
    """
    from atroposlib.envs.base import BaseEnv

    found = [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if obj.__module__ == module.__name__ and issubclass(obj, BaseEnv) and obj is not BaseEnv
    ]
    concrete = [c for c in found if not inspect.isabstract(c)]
    chosen = concrete or found
    return sorted(chosen, key=lambda c: inspect.getsourcelines(c)[1] if _has_source(c) else 0)


def _has_source(cls: type) -> bool:
    try:
        inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return False
    return True
