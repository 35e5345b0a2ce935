"""Import an environment file the way ``python env.py`` would, and find its environment classes.

Import failures become one :class:`EnvLoadError` with a message for the author (file, line, what failed, the fix)
instead of a traceback wall.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from types import ModuleType

from hermes_envs._env_files import defines_env_class, env_files_in, looks_like_env_file
from hermes_envs.env._causes import (
    FailedImport,
    explain_failed_import,
    explain_missing_module,
    own_package_root,
    recording_imports,
    relative_import_lines,
)
from hermes_envs.errors import EnvLoadError

__all__ = [
    "defines_env_class",
    "env_files_in",
    "find_env_classes",
    "import_env_module",
    "looks_like_env_file",
]


def _frame_in(tb_exc: traceback.TracebackException, path: Path) -> str:
    """'line N: <code>' of the deepest frame inside the env file, so the author sees their own line."""
    for frame in reversed(tb_exc.stack):
        if Path(frame.filename).resolve() == path:
            return f"line {frame.lineno}: {(frame.line or '').strip()}"
    return ""


def import_env_module(path: str | Path, record: list[FailedImport] | None = None) -> ModuleType:
    """Import ``path`` as a fresh module with its folder on ``sys.path`` (as ``python path`` does).

    A file inside a package (its folder has ``__init__.py``) that uses relative imports is imported as a member of
    its package (as ``python -m pkg.env`` does), under a private alias of the package so it never displaces a
    package of the same name. Imports the file's own lines attempted and that failed (also those a ``try``
    swallowed) are appended to ``record``: :func:`~hermes_envs.env._causes.explain_no_env_class` reads them.
    """
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
        if entry in _ADDED_PATHS and entry in sys.path:
            # demoted by _fresh_layout_package: this file's own folder comes first again (a host that restored
            # sys.path since, as pytester does between in-process runs, may have dropped it already)
            sys.path.remove(entry)
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        package_root = own_package_root(path) if relative_import_lines(path) else None
        if package_root is not None:
            module_name = _import_package_of(path, package_root, digest)
            if module_name in sys.modules:  # the package's __init__ imported the env module itself
                return sys.modules[module_name]
        return _exec_env_module(path, module_name, [] if record is None else record)
    finally:
        _ADDED_PATHS.extend(e for e in sys.path if e not in before and e not in _ADDED_PATHS)


def _exec_env_module(path: Path, module_name: str, failed: list[FailedImport]) -> ModuleType:
    """Execute ``path`` as module ``module_name``, recording the imports of its own lines that fail into ``failed``;
    import failures become one :class:`EnvLoadError`."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EnvLoadError(f"{path} could not be loaded as a Python module. Fix: give it a .py name.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        with recording_imports(module.__dict__, path) as seen:
            try:
                spec.loader.exec_module(module)
            finally:
                failed.extend(seen)
    except BaseException as exc:  # the author's module may raise anything at import time
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise _load_error(path, exc, failed) from None
    return module


def _import_package_of(path: Path, root: Path, digest: str) -> str:
    """Import the package chain above ``path`` under a private alias of its top package; return the env module's
    dotted name inside it (``<alias>.sub.env``)."""
    alias = f"hermes_conformance_pkg_{root.name}_{digest}"
    relative = path.with_suffix("").relative_to(root).parts
    if alias not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            alias, root / "__init__.py", submodule_search_locations=[str(root)]
        )
        if spec is None or spec.loader is None:  # pragma: no cover - a folder with __init__.py has a spec
            raise EnvLoadError(f"{root} could not be loaded as a package. Fix: check its __init__.py.")
        package = importlib.util.module_from_spec(spec)
        sys.modules[alias] = package
        try:
            spec.loader.exec_module(package)
        except BaseException as exc:
            sys.modules.pop(alias, None)
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise _load_error(root / "__init__.py", exc, [], env=path) from None
    parent = alias
    for part in relative[:-1]:
        parent = f"{parent}.{part}"
        try:
            importlib.import_module(parent)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            init = root.joinpath(*parent.split(".")[1:], "__init__.py")
            raise _load_error(init, exc, [], env=path) from None
    return f"{parent}.{relative[-1]}"


def _load_error(
    path: Path, exc: BaseException, failed: list[FailedImport], env: Path | None = None
) -> EnvLoadError:
    """The author-facing EnvLoadError for ``exc`` raised while importing ``path`` (the env file, or the
    ``__init__.py`` of its package when ``env`` is the env file)."""
    env = env or path
    shown = path.name if env == path else f"{env.name} (its package's {path.parent.name}/__init__.py)"
    if isinstance(exc, SyntaxError):
        line = (exc.text or "").rstrip("\n")
        caret = " " * max(0, (exc.offset or 1) - 1) + "^"
        return EnvLoadError(
            f"{shown} should be valid Python; got a syntax error at line {exc.lineno}: {exc.msg}\n"
            f"    {line}\n    {caret}\nFix: correct the syntax at that line."
        )
    where = _frame_in(traceback.TracebackException.from_exception(exc), path)
    if isinstance(exc, ImportError) and "attempted relative import" in str(exc):
        return EnvLoadError(
            f"{shown} should import; it uses a relative import ({where or 'at import'}) but its folder "
            f"{path.parent.name}/ has no __init__.py, so it is not part of a package.\n"
            "Fix: add an __init__.py to that folder (the kit then loads the file as a member of its package), or "
            "import the sibling module by its plain name."
        )
    if isinstance(exc, ModuleNotFoundError):
        missing = exc.name or str(exc)
        return EnvLoadError(
            f"{shown} should import offline; importing module {missing!r} failed ({where or 'at import'}): "
            f"{_missing_module_hint(missing, env)}"
        )
    if isinstance(exc, ImportError):
        mine = [f for f in failed if f.name is not None and f.error.endswith(str(exc))]
        if mine:
            cause, _, fix = explain_failed_import(mine[-1], env).partition(" Fix: ")
            return EnvLoadError(
                f"{shown} should import offline; importing it raised ImportError: {exc} ({where or 'at import'}): "
                f"{cause}\nFix: {fix or 'fix that import.'}"
            )
    network = "network" in type(exc).__name__.lower() or "NetworkBlocked" in type(exc).__name__
    fix = (
        "do not reach the network at import time; load data in setup() with a built-in fallback."
        if network
        else "make the module import without side effects; move work into setup()."
    )
    return EnvLoadError(
        f"{shown} should import cleanly; importing it raised {type(exc).__name__}: {exc} "
        f"({where or 'at import'}).\nFix: {fix}"
    )


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


def _missing_module_hint(missing: str, env: Path) -> str:
    """The real cause of an import of ``missing`` that failed, then ``Fix: ...`` (see
    :func:`~hermes_envs.env._causes.explain_missing_module`)."""
    cause, _, fix = explain_missing_module(missing, env).partition(" Fix: ")
    return f"{cause}\nFix: {fix or 'fix that import.'}"


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
