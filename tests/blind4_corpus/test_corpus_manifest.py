"""conformance/blind4/MANIFEST.yaml is what the scorer reads: every env file is listed once, every proof exists,
every mutant names a listed correct base and differs from it by a small edit (one mistake, not a rewrite)."""

from __future__ import annotations

import difflib

import yaml
from blind4_helpers import CORPUS

ROOT = CORPUS.parents[1]
ENTRIES = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text())["entries"]


def test_every_env_file_is_listed_once() -> None:
    listed = [e["file"] for e in ENTRIES]
    assert sorted(listed) == sorted(p.name for p in CORPUS.glob("*.py"))
    assert len(set(listed)) == len(listed)


def test_entries_are_complete() -> None:
    correct = {e["file"] for e in ENTRIES if e["kind"] == "correct"}
    for e in ENTRIES:
        path, _, test = e["proof"].partition("::")
        assert (ROOT / path).is_file(), e["proof"]
        assert f"def {test.split('[')[0]}(" in (ROOT / path).read_text(), e["proof"]
        if e["kind"] == "mutant":
            assert e["base"] in correct, e["file"]
            assert path == f"tests/blind4_corpus/test_{e['file']}", e["proof"]
            assert 3 <= len(e["keywords"]) <= 6 and all(k == k.lower() for k in e["keywords"]), e["file"]
            assert e["class"] and e["mistake"], e["file"]
        else:
            assert e["kind"] == "correct" and e["shape"], e["file"]


def test_mutants_are_small_edits_of_their_base() -> None:
    for e in ENTRIES:
        if e["kind"] != "mutant":
            continue
        base = (CORPUS / e["base"]).read_text().splitlines()
        mutant = (CORPUS / e["file"]).read_text().splitlines()
        changed = [
            line
            for line in difflib.unified_diff(base, mutant, lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        assert 0 < len(changed) <= 40, (e["file"], len(changed))
