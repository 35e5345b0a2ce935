"""conformance/blind/MANIFEST.yaml describes every file of the corpus, and each mutant really differs from its base
in code (not only in the docstring line that names the base)."""

from __future__ import annotations

import yaml

from .conftest import BLIND, ROOT

CLASSES = {"reward", "data", "parity", "faults", "state", "effects"}


def entries() -> list[dict]:
    return yaml.safe_load((BLIND / "MANIFEST.yaml").read_text(encoding="utf-8"))["entries"]


def test_manifest_covers_every_file_once() -> None:
    listed = [e["file"] for e in entries()]
    assert sorted(listed) == sorted(p.name for p in BLIND.glob("*.py"))
    assert len(listed) == len(set(listed))


def test_every_entry_names_an_existing_proof() -> None:
    for e in entries():
        path, _, name = e["proof"].partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), e["proof"]


def test_mutants_are_one_change_away_from_a_correct_base() -> None:
    by_file = {e["file"]: e for e in entries()}
    mutants = [e for e in entries() if e["kind"] == "mutant"]
    assert len(mutants) >= 16
    for e in mutants:
        assert by_file[e["base"]]["kind"] == "correct", e["file"]
        assert e["class"] in CLASSES and e["mistake"], e["file"]
        assert 3 <= len(e["keywords"]) <= 6 and all(k == k.lower() for k in e["keywords"]), e["file"]
        mutant = (BLIND / e["file"]).read_text(encoding="utf-8")
        base = (BLIND / e["base"]).read_text(encoding="utf-8")
        assert mutant.splitlines()[0] == f'"""Blind-corpus variant of {e["base"]}.', e["file"]
        body = mutant.split("\n", 2)[2]  # without the added first line and the blank line after it
        assert body != base[3:], e["file"]  # the same file apart from the first line would be no mutant
