"""m_raw_cwd_host: model code must run in its own directory, not in the trainer's working directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from blind3_helpers import load

CODE = "def f():\n    return 1\n"


def _writes_into_cwd(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    import tempfile

    (tmp_path / "tmp").mkdir()
    (tmp_path / "trainer").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.chdir(tmp_path / "trainer")
    code = CODE + "open('notes.txt', 'w').write('written by the model')\n"
    load(name).run_candidate(code, ["f() == 1"])
    return (tmp_path / "trainer" / "notes.txt").exists()


def test_correct_env_runs_code_in_its_own_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not _writes_into_cwd("raw_snippet_exec_env", tmp_path, monkeypatch)


def test_mutant_cwd_host_lets_model_code_write_in_the_trainers_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _writes_into_cwd("m_raw_cwd_host", tmp_path, monkeypatch)
