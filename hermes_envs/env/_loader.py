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
    _fresh_layout_package()
    folder = str(path.parent)
    root = _package_root(path.parent)
    before = set(sys.path)
    for entry in ([str(root)] if root is not None else []) + [folder]:
        if (
            entry in _ADDED_PATHS
        ):  # demoted by _fresh_layout_package: this file's own folder comes first again
            sys.path.remove(entry)
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        return _exec_env_module(path, module_name)
    finally:
        _ADDED_PATHS.extend(e for e in sys.path if e not in before and e not in _ADDED_PATHS)


def _exec_env_module(path: Path, module_name: str) -> ModuleType:
    """Execute ``path`` as module ``module_name``; import failures become one :class:`EnvLoadError`."""
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


#: ``sys.path`` entries added while loading earlier env files (by the loader or by the env's own code).
_ADDED_PATHS: list[str] = []


def _package_root(folder: Path) -> Path | None:
    """The folder holding the top package of ``folder`` (``<repo>`` for ``<repo>/environments/benchmarks/x`` with an
    ``__init__.py`` at each level), so ``environments.benchmarks.x.helpers`` imports as it does from the repo root;
    None when ``folder`` is not a package."""
    if not (folder / "__init__.py").is_file():
        return None
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent


def _fresh_layout_package() -> None:
    """The ``environments`` package an env file gets depends only on that file's own imports and folder, never on
    which file was loaded before it in this process: drop the ``environments`` modules earlier files imported, and
    move the ``sys.path`` entries they added behind the others (still there, for their lazy imports). Also makes the
    author's ``environments`` package and ours one package, and upstream's ``tools.*`` importable
    (:func:`hermes_envs.compat.install_layout`)."""
    from hermes_envs.compat import install_layout

    install_layout()
    for entry in [e for e in sys.path if e in _ADDED_PATHS]:
        sys.path.remove(entry)
        sys.path.append(entry)
    for name in [n for n in sys.modules if n == "environments" or n.startswith("environments.")]:
        del sys.modules[name]


#: Top-level packages whose upstream-layout modules hermes-envs ships (some of them: not every upstream module).
_LAYOUT_PACKAGES = ("environments", "tools")


#: Modules of upstream's ``environments`` package that hermes-envs does not ship (upstream's own envs).
_UPSTREAM_ONLY = frozenset(
    {
        "agentic_opd_env",
        "benchmarks",
        "gpu_mcp",
        "hermes_swe_env",
        "ouroboros_env",
        "roleplay_persona_env",
        "spot_foraging_env",
        "terminal_test_env",
        "web_research_env",
    }
)


def _missing_module_hint(missing: str) -> str:
    """The fix for an import of ``missing`` that failed: name the real cause.

    A submodule of a package hermes-envs provides (``environments.council_evaluator``) is a module hermes-envs does
    not provide, not a sign that hermes-envs is missing; only the package itself missing means "install it". A
    submodule found in none of the ``environments`` folders, under a name upstream does not use, or under a folder
    of the author's own, is the author's own module that is missing: say where it was looked for.
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
    if top == "environments":
        from hermes_envs.compat import package_folders
        from hermes_envs.compat._layout import OURS

        first = rest.split(".")[0]
        own = [Path(f) for f in package_folders() if Path(f) != OURS.resolve()]
        has_first = [f for f in own if (f / first).is_dir() or (f / f"{first}.py").is_file()]
        if has_first or first not in _UPSTREAM_ONLY:
            where = ", ".join(str(f) for f in (has_first or own)) or "none on sys.path"
            rel = missing.split(".", 1)[1].replace(".", "/")
            return (
                f"{missing!r} is not a module of hermes-envs or of upstream hermes-agent: it is your own module, "
                f"and no `environments` package folder has it (your folders: {where}). Create "
                f"environments/{rel}.py (a subpackage needs an __init__.py at each level), or fix the import name."
            )
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
