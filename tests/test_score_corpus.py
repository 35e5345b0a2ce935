"""scripts/score_corpus.py passes everything after ``--`` to ``hermes-envs check``, whatever options come before."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_corpus", ROOT / "scripts" / "score_corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["score_corpus"] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["score_corpus"]
    return module


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--jobs", "1", "--", "--thorough", "--select", "HC413"], ["--thorough", "--select", "HC413"]),
        (["--", "--thorough"], ["--thorough"]),
        (["--jobs", "1"], []),
    ],
)
def test_arguments_after_the_double_dash_reach_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str],
    expected: list[str],
) -> None:  # fmt: skip
    script = _script()
    manifest = tmp_path / "MANIFEST.yaml"
    manifest.write_text("entries:\n  - file: a_env.py\n    kind: correct\n", encoding="utf-8")
    seen: list[list[str]] = []

    def judge(entry: dict, root: Path, check_args: list[str]) -> object:
        seen.append(check_args)
        return script.Verdict(file=entry["file"], kind=entry["kind"], exit_code=0, outcome="clean")

    monkeypatch.setattr(script, "judge_entry", judge)  # the script's own function, not hermes_envs state
    assert script.main([str(manifest), *argv]) == 0
    assert seen == [expected]
    assert "0/1 false alarms" in capsys.readouterr().out
