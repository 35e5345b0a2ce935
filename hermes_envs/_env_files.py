"""Which files hold an environment, judged from their source alone (no import): the discovery ``hermes-envs check``
and ``pytest --hermes-conformance`` do before anything heavy is imported.

It imports only the standard library, so a run that finds no environment (the pre-commit hook on a commit touching
only helper modules) never pays for atroposlib. :mod:`hermes_envs.env` re-exports these names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["defines_env_class", "env_files_in", "looks_like_env_file"]

#: Upstream-layout re-export modules: never environments themselves.
_LAYOUT_MODULES = {
    "hermes_base_env.py",
    "agent_loop.py",
    "tool_context.py",
    "tool_call_parsers.py",
    "__init__.py",
}


def looks_like_env_file(path: Path) -> bool:
    """Cheap test (no import) for folder collection: a .py file that may define an environment class."""
    return _collectable(path) and defines_env_class(path)


def _collectable(path: Path) -> bool:
    """Folder collection never takes layout re-exports, tests, conftest or private modules."""
    return not (
        path.suffix != ".py"
        or path.name in _LAYOUT_MODULES
        or path.name.startswith(("test_", "conftest", "_"))
    )


#: Methods only an environment class defines: a class whose base is named otherwise (``class Mine(ArithBase)``)
#: is still an env when it writes one of these.
_ENV_METHODS = frozenset(
    {"compute_reward", "get_next_item", "collect_trajectory", "collect_trajectories", "score"}
)
#: What a class must define (itself or through bases in the same folder) to be instantiable: upstream's Hermes
#: base leaves four methods abstract, atroposlib's BaseEnv two.
_HERMES_ABSTRACT = frozenset({"format_prompt", "compute_reward", "get_next_item", "evaluate"})
_BASE_ABSTRACT = frozenset({"get_next_item", "evaluate"})


@dataclass
class _ClassShape:
    """A class read from source: its base names and the methods it writes."""

    name: str
    bases: list[str]
    methods: set[str]


def _class_shapes(path: Path) -> list[_ClassShape] | None:
    """The top-level classes of ``path``, or None when it does not parse (the import check then says why)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError):
        return None
    shapes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
            methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            shapes.append(_ClassShape(node.name, bases, methods))
    return shapes


def _env_like(shape: _ClassShape, known: set[str]) -> bool:
    return any(b.endswith("Env") or b in known for b in shape.bases) or bool(_ENV_METHODS & shape.methods)


def defines_env_class(path: Path) -> bool:
    """Cheap test (no import) of any .py file: it defines a class whose base name ends in 'Env', or that writes an
    env's own methods (compute_reward, get_next_item, ...), or it does not parse (so the import check says why).
    A named file that fails it holds no environment."""
    if path.suffix != ".py":
        return False
    shapes = _class_shapes(path)
    return shapes is None or any(_env_like(s, set()) for s in shapes)


def env_files_in(folder: Path) -> list[Path]:
    """The env files of ``folder`` (searched recursively), judged from source across the folder's files.

    A class counts as an env when its base is named like one, is another env-like class of the folder (so
    ``class Mine(ArithBase)`` in one file with ``ArithBase(HermesAgentBaseEnv)`` in another is found), or it writes
    an env's own methods. A file whose env-like classes are all unfinished bases (abstract methods left to
    subclasses in other files) is a helper module, not an env: judging it would report methods it means to lack.
    """
    files = [
        p
        for p in sorted(folder.rglob("*.py"))
        if _collectable(p) and ".venv" not in p.parts and "site-packages" not in p.parts
    ]
    shapes = {p: _class_shapes(p) for p in files}
    by_name: dict[str, list[_ClassShape]] = {}
    for found in shapes.values():
        for shape in found or []:
            by_name.setdefault(shape.name, []).append(shape)
    known: set[str] = set()
    while True:  # fixpoint: a base of a base of an env is an env
        grown = {s.name for found in shapes.values() for s in found or [] if _env_like(s, known)}
        if grown <= known:
            break
        known |= grown
    subclassed_elsewhere = {
        base: {p for p, found in shapes.items() for s in found or [] if base in s.bases} for base in known
    }
    out = []
    for path, found in shapes.items():
        if found is None:
            out.append(path)
            continue
        envs = [s for s in found if s.name in known]
        if envs and not all(
            subclassed_elsewhere.get(s.name, set()) - {path} and _unfinished(s, by_name) for s in envs
        ):
            out.append(path)
    return out


def _unfinished(
    shape: _ClassShape, by_name: dict[str, list[_ClassShape]], seen: frozenset[str] = frozenset()
) -> bool:
    """True when ``shape`` leaves abstract methods to its subclasses (read through bases of the same folder)."""
    written, hermes = _written(shape, by_name, seen | {shape.name})
    return bool((_HERMES_ABSTRACT if hermes else _BASE_ABSTRACT) - written)


def _written(
    shape: _ClassShape, by_name: dict[str, list[_ClassShape]], seen: frozenset[str]
) -> tuple[set[str], bool]:
    """Methods ``shape`` and its same-folder bases write, and whether its chain reaches upstream's Hermes base."""
    written = set(shape.methods)
    hermes = any("Hermes" in b for b in shape.bases)
    for base in shape.bases:
        for parent in by_name.get(base, []) if base not in seen else []:
            more, up = _written(parent, by_name, seen | {base})
            written |= more
            hermes = hermes or up
    return written, hermes
