"""The tools package imports one way: no module of it imports, even indirectly, a module that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_envs.tools as tools

ROOT = Path(tools.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent.parent).with_suffix("")
        name = ".".join(rel.parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = (
                    ".".join([*base, node.module] if node.module else base) if node.level else node.module
                )
                targets = [target, *(f"{target}.{a.name}" for a in node.names)]
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != mod:
                    edges[mod].add(target)
    return edges


def test_no_import_cycle_in_the_tools_package():
    edges = _edges(_modules())

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            mod = todo.pop()
            if mod == goal:
                return True
            if mod not in seen:
                seen.add(mod)
                todo.extend(edges.get(mod, ()))
        return False

    cycles = sorted((a, b) for a, targets in edges.items() for b in targets if reaches(b, a))
    assert cycles == []
