"""m_raw_env_inherit: model code must not see the trainer's environment variables (keys, tokens)."""

from __future__ import annotations

import pytest
from blind3_helpers import load

CODE = "def f():\n    return 1\n"


def _sees_trainer_env(name: str, monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setenv("BLIND3_PROBE_TOKEN", "visible")
    return load(name).run_candidate(CODE, ["__import__('os').environ.get('BLIND3_PROBE_TOKEN') == 'visible'"])


def test_correct_env_hides_the_trainers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _sees_trainer_env("raw_snippet_exec_env", monkeypatch) == 0.0


def test_mutant_env_inherit_shows_the_trainers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _sees_trainer_env("m_raw_env_inherit", monkeypatch) == 1.0
