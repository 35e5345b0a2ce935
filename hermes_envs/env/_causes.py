"""Why an env file did not give the kit an env class: the real cause, named for the author.

Env files in the wild hide their failures: ``try: from atroposlib... except ImportError: class BaseEnv: ...`` swaps
the real base for a stand-in, ``if HERMES_AVAILABLE:`` skips the class, a missing helper module of the env's own
package looks like a missing upstream module. :func:`recording_imports` records every import the env file's own
lines attempted that failed (also the ones a ``try`` swallowed); the ``explain_*`` functions read those records
and the file's syntax tree to say which import failed, at which line, what it disabled, and who must fix it.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

#: Top-level packages of hermes-agent's surface (upstream's module layout). hermes-envs provides part of it; a module
#: or name of it that hermes-envs lacks is a gap of the kit, never the env author's mistake.
UPSTREAM_PACKAGES = ("environments", "tools", "toolsets", "model_tools")

#: Attributes upstream's HermesAgentBaseEnv gives its instances (names only, learnt from upstream's base): an env
#: reading one that hermes-envs' base lacks meets a gap of the kit, not a bug of its own.
UPSTREAM_BASE_ATTRIBUTES = frozenset(
    {
        "_current_group_tools",
        "_tool_error_buffer",
        "_resolve_tools_for_group",
        "_use_managed_server",
        "_format_trajectory_for_display",
        "add_rollouts_for_wandb",
        "collect_trajectories",
        "collect_trajectory",
        "wandb_log",
    }
)

#: Where the real base classes come from, for a stub that replaced one.
REAL_BASES = {
    "HermesAgentBaseEnv": "environments.hermes_base_env (hermes-envs provides it; or hermes_envs.env)",
    "HermesAgentEnvConfig": "environments.hermes_base_env (hermes-envs provides it; or hermes_envs.env)",
    "BaseEnv": "atroposlib.envs.base (the atroposlib package)",
    "BaseEnvConfig": "atroposlib.envs.base (the atroposlib package)",
}


@dataclass(frozen=True)
class FailedImport:
    """An import on one of the env file's lines that failed (raised, or would raise at ``from X import name``)."""

    line: int
    statement: str
    #: The module the statement imports from (relative names resolved against the file's package).
    module: str
    #: The module that was missing (``exc.name``), or ``module`` when a name was missing from it.
    missing: str
    #: The name ``from module import name`` could not find, when the module itself imported.
    name: str | None
    error: str


def _statement_at(lines: list[str], line: int) -> str:
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


@contextlib.contextmanager
def recording_imports(namespace: dict[str, Any], path: Path) -> Iterator[list[FailedImport]]:
    """Within the block, record the imports executed with ``namespace`` as globals (the env module's own lines)
    that fail, including ``from X import name`` whose name X lacks and imports a ``try`` swallows."""
    original = builtins.__import__
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    failed: list[FailedImport] = []

    def record(line: int, module: str, missing: str, name: str | None, error: str) -> None:
        failed.append(FailedImport(line, _statement_at(lines, line), module, missing, name, error))

    def importing(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> ModuleType:
        if globals is not namespace:
            return original(name, globals, locals, fromlist, level)
        frame = sys._getframe(1)
        line = frame.f_lineno if frame.f_globals is namespace else 0
        absolute = name
        if level:
            with contextlib.suppress(ImportError, ValueError):
                absolute = importlib.util.resolve_name("." * level + name, namespace.get("__package__"))
        try:
            module = original(name, globals, locals, fromlist, level)
        except ImportError as exc:
            record(line, absolute, exc.name or absolute, None, f"{type(exc).__name__}: {exc}")
            raise
        for wanted in fromlist or ():
            if wanted == "*" or hasattr(module, wanted):
                continue
            if f"{getattr(module, '__name__', absolute)}.{wanted}" in sys.modules:
                continue
            where = getattr(module, "__name__", absolute)
            record(line, where, where, wanted, f"ImportError: cannot import name {wanted!r} from {where!r}")
        return module

    builtins.__import__ = importing  # same call contract (fromlist None: a plain `import x`)
    try:
        yield failed
    finally:
        builtins.__import__ = original


# ---------------------------------------------------------------------------------------------- missing modules
def own_package_root(path: Path) -> Path | None:
    """The top folder of the package ``path`` belongs to (its folder and every parent up to it have
    ``__init__.py``), or None when its folder is not a package."""
    folder = path.resolve().parent
    if not (folder / "__init__.py").is_file():
        return None
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder


def _find_spec(name: str) -> ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None


def _is_ours(spec_or_module: object) -> bool:
    """True when the module is hermes-envs' own (its upstream-layout package or a stand-in)."""
    origin = getattr(spec_or_module, "origin", None) or getattr(spec_or_module, "__file__", None) or ""
    if getattr(spec_or_module, "__hermes_envs_stand_in__", False):
        return True
    here = str(Path(__file__).resolve().parents[2])
    return bool(origin) and str(Path(origin).resolve()).startswith(here) and "site-packages" not in origin


def _own_parts(path: Path) -> set[str]:
    """Names that mark a module as the env's own: its folder's name and the names of its package chain."""
    folder = path.resolve().parent
    names = {folder.name}
    root = own_package_root(path)
    if root is not None:
        current = folder
        while True:
            names.add(current.name)
            if current == root:
                break
            current = current.parent
    return names


def explain_missing_module(missing: str, path: Path, *, relative: bool = False) -> str:
    """The real cause and fix, for an import of module ``missing`` that failed in the env at ``path``.

    In order: a module of the env's own package or folder (its sibling or subpackage) that is not there; a module
    of hermes-agent's surface that hermes-envs lacks (a gap of the kit); a package that is installed but has no
    such submodule; a package that is not installed."""
    parts = missing.split(".")
    top = parts[0]
    if top == "environments" and not relative:
        own_module = _own_environments_module(missing)
        if own_module is not None:
            return own_module
    own = _own_parts(path)
    if relative or (len(parts) > 1 and any(p in own for p in parts[1:])) or (top in own and len(parts) > 1):
        return (
            f"{missing!r} is part of this env's own code (a sibling module or subpackage of "
            f"{path.resolve().parent.name}/), not an upstream or PyPI module, and it is not there. "
            "Fix: add that file beside the env (commit it with the env), or fix the import's name."
        )
    if top in UPSTREAM_PACKAGES:
        spec = _find_spec(top)
        if spec is None or _is_ours(spec) or top in ("tools",) and _is_ours(sys.modules.get(top)):
            return (
                f"{missing!r} is part of hermes-agent's surface that hermes-envs does not provide yet: a gap of the "
                "kit, not a mistake in your env. Fix: run the env with hermes-agent installed for now, and report "
                "the missing module to hermes-envs."
            )
    spec = _find_spec(top)
    if spec is not None and len(parts) > 1:
        version = _version_of(top)
        return (
            f"the package {top!r} is installed{version} but has no module {missing!r}. Fix: check the module's "
            f"name, or the version of {top!r} the env needs."
        )
    if spec is not None:
        return f"{missing!r} is installed but failed to import. Fix: import it in a Python shell to see why."
    return (
        f"no installed package provides {missing!r}. Fix: install the package that provides it, or fix the "
        "import name."
    )


#: Modules of upstream's ``environments`` package that hermes-envs does not ship (upstream's own envs).
UPSTREAM_ONLY = frozenset(
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


def _own_environments_module(missing: str) -> str | None:
    """For a missing ``environments...`` module: "install hermes-envs" when the package itself is missing; the
    author's own module when a folder of their ``environments`` package has its first part, or upstream has no
    module of that name (say where it was looked for); None for an upstream module hermes-envs does not ship."""
    rest = missing.partition(".")[2]
    if not rest or _find_spec("environments") is None:
        return (
            "the upstream-layout package 'environments' comes with hermes-envs, and this Python does not have it. "
            "Fix: install hermes-envs in the Python that runs the check (pip install hermes-envs)."
        )
    from hermes_envs.compat import package_folders
    from hermes_envs.compat._layout import OURS

    first = rest.split(".")[0]
    own = [Path(f) for f in package_folders() if Path(f) != OURS.resolve()]
    has_first = [f for f in own if (f / first).is_dir() or (f / f"{first}.py").is_file()]
    if not has_first and first in UPSTREAM_ONLY:
        return None
    where = ", ".join(str(f) for f in (has_first or own)) or "none on sys.path"
    rel = rest.replace(".", "/")
    return (
        f"{missing!r} is not a module of hermes-envs or of upstream hermes-agent: it is your own module, and no "
        f"`environments` package folder has it (your folders: {where}). Fix: create environments/{rel}.py (a "
        "subpackage needs an __init__.py at each level), or fix the import name."
    )


def explain_missing_name(module: str, name: str, path: Path) -> str:
    """The real cause and fix for ``from module import name`` where the module imported but lacks ``name``."""
    loaded = sys.modules.get(module)
    top = module.split(".")[0]
    if top in UPSTREAM_PACKAGES and (loaded is None or _is_ours(loaded)):
        return (
            f"hermes-envs' {module!r} (its stand-in for hermes-agent's module) has no {name!r}: if upstream's "
            f"{module} defines it, this is a gap of the kit, not a mistake in your env. Fix: if upstream defines "
            f"{name!r} there, report the gap of the kit to hermes-envs and run with hermes-agent installed "
            f"meanwhile; if it does not, import {name!r} from the module upstream defines it in."
        )
    origin = getattr(loaded, "__file__", "") or ""
    if origin and str(Path(origin).resolve()).startswith(str(path.resolve().parent)):
        return f"this env's own module {module!r} has no {name!r}. Fix: define it there, or fix the name."
    return (
        f"the installed {top!r}{_version_of(top)} has no {name!r} in {module!r}. Fix: check the name, or the "
        f"version of {top!r} the env needs."
    )


def _version_of(top: str) -> str:
    from importlib import metadata

    try:
        return f" (version {metadata.version(top)})"
    except metadata.PackageNotFoundError:
        return ""
    except Exception:
        return ""


def explain_failed_import(failed: FailedImport, path: Path) -> str:
    """One failed import's real cause and fix (see :func:`explain_missing_module` / :func:`explain_missing_name`)."""
    if failed.name is not None:
        return explain_missing_name(failed.module, failed.name, path)
    relative = failed.statement.startswith("from .")
    return explain_missing_module(failed.missing, path, relative=relative)


# ---------------------------------------------------------------------------------------------- hidden env class
def _names_of(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    caught = _names_of(handler.type) | {
        n.attr for n in ast.walk(handler.type) if isinstance(n, ast.Attribute)
    }
    return bool(caught & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _bound_in(body: list[ast.stmt]) -> dict[str, int]:
    """Names a block binds (classes, functions, assignments, imports) -> their line."""
    bound: dict[str, int] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                bound.setdefault(node.name, node.lineno)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in _names_of(target):
                        bound.setdefault(name, node.lineno)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                bound.setdefault(node.target.id, node.lineno)
    return bound


def _imported_names(body: list[ast.stmt]) -> dict[str, str]:
    """Names a block imports -> the module they come from."""
    out: dict[str, str] = {}
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    out[alias.asname or alias.name] = module
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    out[alias.asname or alias.name.split(".")[0]] = alias.name
    return out


@dataclass(frozen=True)
class _Fallback:
    """A ``try`` of imports whose handler ran: what failed, and what the handler put in place of it."""

    failed: FailedImport
    stand_ins: dict[str, int]
    real_modules: dict[str, str]


def _fallbacks(tree: ast.Module, failed: list[FailedImport]) -> list[_Fallback]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not node.body:
            continue
        start, end = (
            node.body[0].lineno,
            max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in node.body),
        )
        inside = [f for f in failed if start <= f.line <= end]
        handlers = [h for h in node.handlers if _catches_import_error(h)]
        if not inside or not handlers:
            continue
        stand_ins: dict[str, int] = {}
        for handler in handlers:
            stand_ins.update(_bound_in(handler.body))
        out.append(_Fallback(inside[0], stand_ins, _imported_names(node.body)))
    return out


def _base_names(cls: ast.ClassDef) -> list[str]:
    names = []
    for base in cls.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def _looks_like_env(cls: ast.ClassDef) -> bool:
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return bool(
        methods & {"compute_reward", "get_next_item", "collect_trajectory", "config_init", "setup"}
    ) or any(b.endswith("Env") for b in _base_names(cls))


def explain_no_env_class(path: Path, namespace: dict[str, Any], failed: list[FailedImport]) -> str | None:
    """Why a file that imported defines no env class the kit can use, when an import it swallowed is the cause:
    a base class replaced by a stub, or a class defined under a flag that came out False. None otherwise."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return None
    fallbacks = _fallbacks(tree, failed)
    if not fallbacks:
        return None
    name = path.name
    # 1. A class whose base is a stand-in defined (or assigned) by the handler of a failed import.
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for base in _base_names(cls):
            for fb in fallbacks:
                if base not in fb.stand_ins:
                    continue
                real = fb.real_modules.get(base) or REAL_BASES.get(base, "the module that defines it")
                f = fb.failed
                cause, _, fix = explain_failed_import(f, path).partition(" Fix: ")
                return (
                    f"{name} should define an env class deriving from the real {base}; got {cls.name} (line "
                    f"{cls.lineno}) deriving from the stand-in {base} that line {fb.stand_ins[base]} puts in place "
                    f"after `{f.statement}` (line {f.line}) failed with {f.error}. The real {base} comes from "
                    f"{real}. Why that import failed: {cause}\nFix: {fix} Then let a failed import raise instead "
                    "of defining a stand-in base: the stand-in hides the cause."
                )
    # 2. A class defined only under `if FLAG:` where FLAG came out false after a failed import.
    for node in tree.body:
        if not isinstance(node, ast.If):
            continue
        classes = [n for n in ast.walk(node) if isinstance(n, ast.ClassDef) and _looks_like_env(n)]
        if not classes:
            continue
        flags = sorted(_names_of(node.test))
        for fb in fallbacks:
            hit = [flag for flag in flags if flag in fb.stand_ins]
            if not hit:
                continue
            flag = hit[0]
            f = fb.failed
            value = namespace.get(flag, "unset")
            cause, _, fix = explain_failed_import(f, path).partition(" Fix: ")
            return (
                f"{name} should define an env class; {classes[0].name} (line {classes[0].lineno}) is defined only "
                f"under `if {ast.unparse(node.test)}:` (line {node.lineno}), and {flag} is {value!r}: line "
                f"{fb.stand_ins[flag]} set it after `{f.statement}` (line {f.line}) failed with {f.error}. Why "
                f"that import failed: {cause}\nFix: {fix}"
            )
    return None


def relative_import_lines(path: Path) -> list[int]:
    """Lines of ``from . import`` / ``from .x import`` statements in the file (empty when it has none)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except SyntaxError:
        return []
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]


# ---------------------------------------------------------------------------------------------- kit gaps at run time
def _sets_itself(source: str, attribute: str) -> bool:
    """True when the env's own source defines ``attribute`` (``self.x = ...``, ``def x``, ``x = ...`` in a class)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True  # cannot tell: never blame the kit on a guess
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == attribute:
            return True
        if isinstance(node, ast.Name) and node.id == attribute and isinstance(node.ctx, ast.Store):
            return True
    return False


def kit_gap(
    error: str,
    env_cls: type | None,
    path: Path,
    *,
    upstream_attributes: frozenset[str] = UPSTREAM_BASE_ATTRIBUTES,
) -> str | None:
    """When ``error`` ("Type: message", or an exception's text) is the env reaching for a part of upstream's
    surface that hermes-envs lacks, the sentence saying so (a gap of the kit, never the author's mistake); else None.

    Two shapes: an attribute the env reads on itself but never sets, which its hermes-envs base lacks
    (``self._current_group_tools``); an attribute of an upstream-layout module hermes-envs provides
    (``toolsets.create_custom_toolset``). ``upstream_attributes``: the names upstream's base provides (default: the
    ones learnt from it; a test passes a made-up one, since hermes-envs' base provides every real one by now)."""
    import re

    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    on_object = re.search(r"'(\w+)' object has no attribute '(\w+)'", error)
    if on_object and env_cls is not None:
        owner, attribute = on_object.groups()
        mro = [c for c in getattr(env_cls, "__mro__", ()) if c is not object]
        ours = [c for c in mro if c.__module__.split(".")[0] in ("hermes_envs", *UPSTREAM_PACKAGES)]
        if (
            attribute in upstream_attributes
            and owner in {c.__name__ for c in mro}
            and ours
            and not _sets_itself(source, attribute)
        ):
            return (
                f"the env reads `self.{attribute}`, which it never sets itself: upstream's HermesAgentBaseEnv "
                f"provides it, and hermes-envs' {ours[0].__name__} does not. That is a gap of the kit, not a "
                "mistake in your env (report it to hermes-envs; run with hermes-agent meanwhile)."
            )
    on_module = re.search(r"module '([\w.]+)' has no attribute '(\w+)'", error)
    if on_module:
        module, attribute = on_module.groups()
        loaded = sys.modules.get(module)
        if module.split(".")[0] in UPSTREAM_PACKAGES and (loaded is None or _is_ours(loaded)):
            return (
                f"hermes-envs' {module} (its stand-in for hermes-agent's module) has no `{attribute}`: if upstream's "
                f"{module} defines it, that is a gap of the kit, not a mistake in your env (report it to "
                "hermes-envs; run with hermes-agent meanwhile)."
            )
    return None


__all__ = [
    "FailedImport",
    "explain_failed_import",
    "explain_missing_module",
    "explain_missing_name",
    "explain_no_env_class",
    "kit_gap",
    "own_package_root",
    "recording_imports",
    "relative_import_lines",
]
