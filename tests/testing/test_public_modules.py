"""Only the modules the docs import by path are public in ``testing`` and ``env``; the rest are ``_name.py``.

A public module is a promise (users import it by path), so one that no doc names is an implementation module that
should be private, and one the docs name must stay importable. The rule is in docs/architecture.md.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import hermes_envs

PACKAGE = Path(hermes_envs.__file__).parent
ROOT = PACKAGE.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Public modules of each package and the reason; the docs must name each by its dotted path.
PUBLIC = {
    "testing": {"offline", "cassettes", "recording", "snapshots", "strategies", "retries", "secret_rules"},
    "env": {"distributions"},
}


def _modules(package: str) -> set[str]:
    folder = PACKAGE / package
    files = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return files | packages


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_every_public_module_is_one_the_docs_import_by_path(package: str) -> None:
    public = {m for m in _modules(package) if not m.startswith("_")}
    if package == "testing":
        public.discard("fake_server")  # its own package with its own docs page (docs/fake-server.md)
    assert public == PUBLIC[package], (
        f"hermes_envs.{package} should have the public modules {sorted(PUBLIC[package])}; got {sorted(public)}. "
        "Fix: name an implementation module _name.py and re-export its public names from the package facade, or "
        "document the module's path and add it (with the reason) to docs/architecture.md and PUBLIC here."
    )


@pytest.mark.parametrize("dotted", sorted(f"hermes_envs.{p}.{m}" for p, ms in PUBLIC.items() for m in ms))
def test_the_docs_name_each_public_module_and_it_imports(dotted: str) -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    assert dotted in text, (
        f"{dotted} is public but no doc names it. Fix: make it private (_name.py) or document it."
    )
    importlib.import_module(dotted)
