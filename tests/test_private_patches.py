"""No test steers hermes-envs by patching its private module state: tests use the public seams (settings, runtime
arguments, context managers) a user has too, so a refactor of the internals cannot silently void a test.

Walks every test file's syntax tree and fails, naming file and line, on ``monkeypatch.setattr``/``setitem``/
``delattr``/``delitem``, ``mock.patch``/``patch.object``, ``setattr()`` or an assignment aimed at a hermes_envs name
whose dotted path has a private part (``hermes_envs.tools._fresh.FreshShells.wanted``, ``module._STATE``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
PATCHERS = {"setattr", "setitem", "delattr", "delitem", "patch", "object"}


def _private(dotted: str) -> bool:
    """True when a hermes_envs dotted path names something private: a part starting with one underscore."""
    parts = dotted.split(".")
    return parts[0] == "hermes_envs" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])


class _Finder(ast.NodeVisitor):
    """Collects (line, target) for every patch of a private hermes_envs name in one module."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # local name -> dotted hermes_envs path
        self.hits: list[tuple[int, str]] = []

        self.foreign: set[str] = set()  # names imported from anywhere else (sys, tempfile, BaseEnv ...)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not alias.name.startswith("hermes_envs"):
                self.foreign.add(alias.asname or alias.name.partition(".")[0])
            else:
                if alias.asname:
                    self.names[alias.asname] = alias.name
                else:
                    self.names["hermes_envs"] = "hermes_envs"

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.module.startswith("hermes_envs") and not node.level:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        else:
            self.foreign.update(alias.asname or alias.name for alias in node.names)

    def _root(self, node: ast.expr) -> str | None:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def _dotted(self, node: ast.expr) -> str | None:
        """The hermes_envs path an expression names (``mod._X.y``), or None when it is not one of ours."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Subscript):
            return self._dotted(node.value)
        return None

    def _flag(self, node: ast.AST, dotted: str | None) -> None:
        if dotted and _private(dotted):
            self.hits.append((getattr(node, "lineno", 0), dotted))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in PATCHERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                self._flag(
                    node, first.value
                )  # monkeypatch.setattr("hermes_envs.x._Y", ...), mock.patch("...")
            else:
                target = self._dotted(first)
                attr = node.args[1] if len(node.args) > 1 else None
                if (
                    target
                    and isinstance(attr, ast.Constant)
                    and isinstance(attr.value, str)
                    and name != "setitem"
                ):
                    target = f"{target}.{attr.value}"
                elif (
                    target is None
                    and name == "setattr"
                    and isinstance(attr, ast.Constant)
                    and isinstance(attr.value, str)
                    and attr.value.startswith("_")
                    and not attr.value.startswith("__")
                    and self._root(first) not in self.foreign
                ):
                    # a private name of an object made in the test (type(parser), a local class): ours unless
                    # the object comes from another library
                    target = f"hermes_envs.<{ast.unparse(first)}>.{attr.value}"
                self._flag(node, target)
        self.generic_visit(node)

    def _assigned(self, node: ast.AST, targets: list[ast.expr]) -> None:
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, (ast.Attribute, ast.Subscript)):
                    self._flag(node, self._dotted(part))
                    break

    def visit_Assign(self, node: ast.Assign) -> None:
        self._assigned(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._assigned(node, [node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._assigned(node, node.targets)
        self.generic_visit(node)


def private_patches(source: str) -> list[tuple[int, str]]:
    """Every (line, dotted name) where ``source`` patches or assigns private hermes_envs state."""
    finder = _Finder()
    tree = ast.parse(source)
    for node in ast.walk(tree):  # imports first, wherever they are (function-level ones too)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            finder.visit(node)
    finder.visit(tree)
    return sorted(set(finder.hits))


@pytest.mark.parametrize(
    "source",
    [
        "from hermes_envs.tools import _fresh\ndef t(monkeypatch):\n    monkeypatch.setattr(_fresh.X, 'wanted', 1)\n",
        "import hermes_envs.testing._netns as netns\ndef t(monkeypatch):\n    netns._STATE['ns'] = None\n",
        "from hermes_envs import tools\ndef t(monkeypatch):\n    monkeypatch.setattr(tools, '_LIMIT', 1)\n",
        "def t(monkeypatch):\n    monkeypatch.setattr('hermes_envs.conformance._contained._WARNED', [])\n",
        "from unittest import mock\nwith mock.patch('hermes_envs.tools._shell._GRACE', 0.1):\n    pass\n",
        "from hermes_envs.tools import sandbox\nsandbox._default = None\n",
        "def t(monkeypatch, parser):\n    monkeypatch.setattr(type(parser), '_parse', len)\n",
    ],
)
def test_the_scan_catches_each_way_of_patching(source: str) -> None:
    assert private_patches(source), source


@pytest.mark.parametrize(
    "source",
    [
        "import tempfile\ndef t(monkeypatch):\n    monkeypatch.setattr(tempfile, 'tempdir', '/x')\n",
        "from hermes_envs.tools import ToolContext\ndef t(monkeypatch):\n    monkeypatch.setattr(ToolContext, 'cleanup', 1)\n",
        "from hermes_envs import tools\nlimits = tools.Limits()\nlimits._cache = {}\n",  # an object the test made
        "import sys\ndef t(monkeypatch):\n    monkeypatch.setattr(sys, '_current_frames', dict)\n",
        "from atroposlib.envs.base import BaseEnv\ndef t(monkeypatch):\n    monkeypatch.setattr(BaseEnv, '_x', 1)\n",
        "def t(monkeypatch, fresh):\n    monkeypatch.setattr(fresh, 'ensure_spare', len)\n",
    ],
)
def test_the_scan_leaves_public_and_foreign_names_alone(source: str) -> None:
    assert not private_patches(source), source


def _found() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        for _line, name in private_patches(path.read_text(encoding="utf-8")):
            found.setdefault(str(path.relative_to(TESTS.parent)), set()).add(name)
    return found


def test_no_test_patches_private_hermes_envs_state() -> None:
    found = _found()
    new = sorted(f"{f}: {n}" for f, names in found.items() for n in names)
    assert not new, (
        "these tests patch private hermes_envs state; give the code a public seam (a setting, a runtime argument, "
        "a context manager) and use it instead:\n" + "\n".join(new)
    )
