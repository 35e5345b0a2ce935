"""Every package of hermes_envs declares its public modules; the rest are private ``_name.py`` behind the facade.

A public module is a promise (users import it by path or run it with ``python -m``), so each one is listed here with
the reason, for every package (a new package or a new public module fails until it is listed). Where the rule is
"only what the docs name", the docs must name each public module by its dotted path and it must import. The rule is
in docs/architecture.md.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import hermes_envs

PACKAGE = Path(hermes_envs.__file__).parent
ROOT = PACKAGE.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: conformance.checks holds one module per area of checks (each registers its checks on import; other work adds
#: areas), so any module there is public by its role: it is listed as the package, not module by module.
ANY = {"*"}
#: Public modules (and subpackages) of each public package. Packages in DOCUMENTED keep public only what the docs
#: import by path or run; the others are listed as they are (not yet split into private modules: see the issue list
#: in docs/architecture.md), so at least nothing new turns public unnoticed.
PUBLIC: dict[str, set[str]] = {
    "": {
        "agent",
        "cli",
        "compat",
        "conformance",
        "demo",
        "env",
        "errors",
        "parsers",
        "plugin",
        "testing",
        "tools",
        "viewer",
    },
    "testing": {
        "offline",
        "cassettes",
        "recording",
        "snapshots",
        "strategies",
        "retries",
        "secret_rules",
        "fake_server",
    },
    "testing.fake_server": {
        "cli",
        "scripts",
    },  # `python -m ...fake_server.cli`; scripts: the older import path
    "env": {"distributions"},
    "conformance": {"docs", "checks"},  # `python -m hermes_envs.conformance.docs`; the catalogue of checks
    "conformance.checks": ANY,  # one module per area; each registers its checks on import
    "agent": {"budget", "loop", "response", "result"},
    "compat": {
        "budget_config",
        "council_personas",
        "model_tools",
        "registry",
        "terminal_tool",
        "toolsets",
        "upstream_parsers",
    },
    "parsers": {
        "auto",
        "base",
        "custom_xml",
        "deepseek",
        "deepseek_v4",
        "glm",
        "invoke",
        "json_tagged",
        "kimi",
        "llama",
        "mistral",
        "qwen3_coder",
        "schema_typing",
        "xml_params",
    },
    "tools": {"backends", "builtin", "context", "context_web", "registry", "sandbox", "schema", "toolsets"},
    "tools.backends": {"base", "container", "docker", "local"},
    "tools.toolsets": {
        "browser",
        "browser_dom",
        "browser_playwright",
        "clarify",
        "code_execution",
        "corpus",
        "council",
        "delegation",
        "dom",
        "image_gen",
        "memory",
        "moa",
        "model",
        "process",
        "recording",
        "skills",
        "todo",
        "vision",
        "web",
        "web_backends",
        "web_server",
    },
    "viewer": {"findings", "groups", "render", "template"},
}
DOCUMENTED = {"testing", "testing.fake_server", "env", "conformance"}


def _packages() -> list[str]:
    """Every public package, as a path relative to hermes_envs ("" for the top)."""
    found = []
    for init in PACKAGE.rglob("__init__.py"):
        parts = init.parent.relative_to(PACKAGE).parts
        if not any(p.startswith("_") for p in parts):
            found.append(".".join(parts))
    return sorted(found)


def _public_modules(package: str) -> set[str]:
    folder = PACKAGE.joinpath(*package.split(".")) if package else PACKAGE
    files = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return {m for m in files | packages if not m.startswith("_")}


def _dotted(package: str, module: str = "") -> str:
    return ".".join(p for p in ("hermes_envs", package, module) if p)


def test_every_package_is_listed() -> None:
    assert _packages() == sorted(PUBLIC), (
        f"tests/test_public_modules.py PUBLIC should list every public package; got {_packages()}. Fix: make the "
        "new package private (_name/) or list its public modules (with the reason)."
    )


@pytest.mark.parametrize("package", sorted(p for p in PUBLIC if PUBLIC[p] != ANY))
def test_each_package_has_only_its_listed_public_modules(package: str) -> None:
    public = _public_modules(package)
    assert public == PUBLIC[package], (
        f"{_dotted(package)} should have the public modules {sorted(PUBLIC[package])}; got {sorted(public)}. "
        "Fix: name an implementation module _name.py and re-export its public names from the package facade, or "
        "document the module's path and add it (with the reason) to docs/architecture.md and PUBLIC here."
    )


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_each_package_facade_declares_all(package: str) -> None:
    init = (PACKAGE.joinpath(*package.split(".")) if package else PACKAGE) / "__init__.py"
    names = {
        t.id
        for node in ast.parse(init.read_text(encoding="utf-8")).body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }
    assert "__all__" in names, f"{_dotted(package)}/__init__.py should set __all__ (its public names)."


@pytest.mark.parametrize(
    "dotted",
    sorted(
        _dotted(p, m)
        for p in DOCUMENTED
        for m in PUBLIC[p]
        if _dotted(p, m) not in {"hermes_envs.conformance.checks"}
    ),
)
def test_the_docs_name_each_public_module_and_it_imports(dotted: str) -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    assert dotted in text, (
        f"{dotted} is public but no doc names it. Fix: make it private (_name.py) or document it."
    )
    importlib.import_module(dotted)


#: Private modules exempt from declaring ``__all__``, with the reason.
NO_ALL = {
    # the sandbox's `hermes_tools` module (copied in as a file): `from hermes_tools import *` must give whatever
    # tools _keep_only left, which a fixed __all__ would break
    "tools/toolsets/_script_api.py",
}


def _private_modules() -> list[Path]:
    """Every ``_name.py`` implementation module of hermes_envs (dunder files aside)."""
    return sorted(
        p for p in PACKAGE.rglob("_*.py") if not p.name.startswith("__") and not p.stem.startswith("__")
    )


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level(tree: ast.Module) -> tuple[list[str] | None, set[str]]:
    """(the module's ``__all__`` as written, None when it has none; every name bound at its top level)."""
    declared: list[str] | None = None
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node in tree.body:
            bound.update((a.asname or a.name).partition(".")[0] for a in node.names)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                bound.add(target.id)
                if target.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                    declared = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
        if isinstance(node, ast.If):  # (TYPE_CHECKING / version branches)
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    bound.update((a.asname or a.name).partition(".")[0] for a in inner.names)
                elif isinstance(inner, (ast.FunctionDef, ast.ClassDef)):
                    bound.add(inner.name)
    return declared, bound


@pytest.mark.parametrize(
    "path",
    [p for p in _private_modules() if str(p.relative_to(PACKAGE)) not in NO_ALL],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_each_private_module_declares_all(path: Path) -> None:
    declared, bound = _top_level(ast.parse(path.read_text(encoding="utf-8")))
    assert declared is not None, (
        f"{_module_name(path)} should set __all__ (the names its package and others may import from it). Fix: "
        "add __all__ = [...] after the imports, listing its public names."
    )
    missing = sorted(set(declared) - bound)
    assert not missing, f"{_module_name(path)}.__all__ names {missing}, which the module does not define."


def _imports_from_private_modules() -> list[tuple[str, str, str]]:
    """(importing module, private module, name) for every ``from <private module> import name`` in hermes_envs
    whose importer lives in another package than the private module."""
    found = []
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    for importer, path in modules.items():
        package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or node.module not in modules:
                continue
            target = node.module
            leaf = target.rpartition(".")[2]
            if leaf.startswith("_") and not leaf.startswith("__") and target.rpartition(".")[0] != package:
                found += [(importer, target, a.name) for a in node.names]
    return found


def test_other_packages_import_only_what_a_private_module_exports() -> None:
    wrong = []
    for importer, target, name in _imports_from_private_modules():
        path = PACKAGE.joinpath(*target.split(".")[1:]).with_suffix(".py")
        declared, _bound = _top_level(ast.parse(path.read_text(encoding="utf-8")))
        if declared is not None and name not in declared:
            wrong.append(f"{importer} imports {name} from {target}")
    assert not wrong, (
        "these imports take a name its private module does not export (not in its __all__):\n"
        + "\n".join(wrong)
        + "\nFix: make the name public there (no underscore, listed in __all__), or move it to a shared module."
    )


def test_no_check_module_imports_a_private_name_of_another_check_module() -> None:
    checks = PACKAGE / "conformance" / "checks"
    wrong = []
    for path in sorted(checks.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "hermes_envs.conformance.checks."
            ):
                wrong += [
                    f"{path.name} imports {a.name} from {node.module}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
            elif isinstance(node, ast.ImportFrom) and node.level and node.module:
                wrong += [
                    f"{path.name} imports {a.name} from .{node.module}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert not wrong, (
        "a check module should not reach into another one's private names:\n"
        + "\n".join(wrong)
        + "\nFix: give the shared name a home outside the check modules (the registry, _golds, _cases, an "
        "observation) under a public name, or make it public in the module that owns it."
    )
