"""The blind5 MANIFEST lists every env file of conformance/blind5/ once, each mutant names an existing base, and every
proof names a test node that exists."""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance" / "blind5"
CLASSES = {"reward", "data", "parity", "faults", "state", "effects", "resume", "interface"}


def entries() -> list[dict]:
    return yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())["entries"]


def test_every_file_has_one_entry() -> None:
    listed = [e["file"] for e in entries()]
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(p.name for p in CORPUS.glob("*.py"))


def test_entries_are_complete() -> None:
    files = {e["file"]: e for e in entries()}
    for e in entries():
        assert e["kind"] in {"correct", "mutant"}, e
        if e["kind"] == "correct":
            assert e["shape"] and "NousResearch/" in e["shape"], e
        else:
            assert e["file"].startswith("m_"), e
            assert files[e["base"]]["kind"] == "correct", e
            assert e["class"] in CLASSES, e
            assert e["mistake"] and e["keywords"], e


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_proof_node_exists() -> None:
    for e in entries():
        node = e["proof"]
        path, _, name = node.partition("::")
        name = name.split("[", 1)[0]
        assert (ROOT / path).is_file(), node
        assert name in _test_names(ROOT / path), node
        if e["kind"] == "correct":
            assert node.endswith(f"[{e['file'].removesuffix('.py')}]"), node
