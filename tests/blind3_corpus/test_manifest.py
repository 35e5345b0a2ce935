"""conformance/blind3/MANIFEST.yaml lists every corpus file once, with a proof node that exists, and each mutant names
its correct env on its first docstring line (what the lead's scoring reads)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance" / "blind3"
CLASSES = {"reward", "data", "parity", "faults", "state", "effects"}


def _entries() -> list[dict]:
    return yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())["entries"]


def test_every_file_listed_once() -> None:
    listed = [e["file"] for e in _entries()]
    assert len(listed) == len(set(listed))
    assert set(listed) == {p.name for p in CORPUS.glob("*.py")}


def test_mutant_entries_are_complete() -> None:
    mutants = [e for e in _entries() if e["kind"] == "mutant"]
    assert len(mutants) >= 18
    for e in mutants:
        assert e["class"] in CLASSES, e["file"]
        assert (CORPUS / e["base"]).exists(), e["file"]
        assert e["mistake"].strip(), e["file"]
        assert 3 <= len(e["keywords"]) <= 6 and all(k == str(k).lower() for k in e["keywords"]), e["file"]
        first = (CORPUS / e["file"]).read_text().splitlines()[0]
        assert first == f'"""Derived from {e["base"]}.', e["file"]
    per_class = {c: sum(1 for e in mutants if e["class"] == c) for c in CLASSES}
    assert min(per_class.values()) >= 2, per_class


def test_proof_nodes_exist() -> None:
    for e in _entries():
        path, node = e["proof"].split("::")
        assert (ROOT / path).exists(), e["proof"]
        assert f"def {node.split('[')[0]}(" in (ROOT / path).read_text(), e["proof"]
