"""m_raw_tmp_leak: executing model code must not leave a temporary directory behind per completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from blind3_helpers import load

CODE = "def f():\n    return 1\n"


def _temp_leftovers(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert load(name).run_candidate(CODE, ["f() == 1"]) == 1.0
    return [p.name for p in tmp_path.iterdir()]


def test_correct_env_removes_its_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _temp_leftovers("raw_snippet_exec_env", tmp_path, monkeypatch) == []


def test_mutant_tmp_leak_leaves_a_dir_per_completion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    left = _temp_leftovers("m_raw_tmp_leak", tmp_path, monkeypatch)
    assert len(left) == 1 and left[0].startswith("snippet-exec-")
