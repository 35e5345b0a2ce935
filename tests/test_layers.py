"""Imports run one way: core (errors, parsers, tools, agent, env) <- testing <- conformance <- plugin/CLI.

Walks every ``import`` in ``hermes_envs`` (function-level ones too: a lazy import is still a dependency) and fails
on an upward edge between layers or on a cycle between packages, naming the modules and the line.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import hermes_envs

ROOT = Path(hermes_envs.__file__).parent
#: Layer of each top-level part of the package; a module may import only its own layer or a lower one.
LAYERS = {
    "_definitions": 0,
    "_registry": 0,
    "_http_client": 0,
    "_lazy": 0,
    "_text": 0,
    "_chat": 0,
    "_json_types": 0,  # typing only: the JSONValue / JSONObject / Message aliases of parsers and agent
    "_quiet": 0,  # stdlib-only output capture for the demo and CLI
    "_seams": 0,  # data only: imports nothing (targets are strings)
    "_spawn_namespace": 0,  # stdlib-only: the network guard's probe, read by the sandbox pool
    "_env_files": 0,  # stdlib-only: which files hold an env, from source (discovery before the heavy imports)
    "errors": 0,
    "parsers": 1,
    "tools": 2,
    "agent": 3,
    "env": 4,
    "compat": 4,  # stand-ins for upstream top-level modules (tools.terminal_tool ...): over tools and agent
    "testing": 5,
    "conformance": 6,
    "demo": 7,
    "viewer": 7,
    "plugin": 8,
    "cli": 8,
    "__init__": 8,  # the facade re-exports lazily from everywhere
    "__main__": 8,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(modules: dict[str, Path]) -> list[tuple[str, str, int]]:
    edges = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target.startswith("hermes_envs."):
                    edges.append((name, target, node.lineno))
    return edges


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _package(module: str, modules: dict[str, Path]) -> str:
    return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]


def test_no_module_imports_from_a_higher_layer() -> None:
    modules = _modules()
    unknown = sorted({_part(m) for m in modules} - set(LAYERS))
    assert not unknown, f"new top-level parts {unknown} need a layer in tests/test_layers.py LAYERS"
    upward = [
        f"{a}:{line} imports {b} ({_part(a)} is below {_part(b)})"
        for a, b, line in _imports(modules)
        if LAYERS[_part(b)] > LAYERS[_part(a)]
    ]
    assert not upward, (
        "imports should run one way (core <- testing <- conformance <- plugin/CLI):\n" + "\n".join(upward)
    )


def test_no_cycle_between_packages() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for a, b, line in _imports(modules):
        pa, pb = _package(a, modules), _package(b, modules)
        # A package may import its own subpackages (its facade re-exports them); the reverse edge is the cycle.
        if pa != pb and not pb.startswith(pa + "."):
            graph[pa].add(pb)
            where.setdefault((pa, pb), f"{a}:{line}")
    cycles = []
    for start in sorted(graph):
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.append(trail + [start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, trail + [nxt]))
    described = {
        " -> ".join(c) + "  (" + ", ".join(where[(x, y)] for x, y in zip(c, c[1:])) + ")"
        for c in cycles
        if c[0] == min(c[:-1])
    }
    assert not described, "packages should not import each other in a cycle:\n" + "\n".join(sorted(described))


def test_no_import_cycle_between_modules() -> None:
    """A cycle between two modules (even inside one package, even through a lazy import) means neither can be
    understood or tested alone; the fix is usually to move the shared piece into a module both import."""
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b, _line in _imports(modules):
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    assert not cycles, "modules should not import each other in a cycle:\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )
