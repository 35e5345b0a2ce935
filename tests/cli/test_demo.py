"""`hermes-envs demo` reads as a summary: quiet by default, details in demo.log, -v for everything."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs._quiet import captured
from hermes_envs.testing.offline import offline_environ

ROOT = Path(__file__).parents[2]


def test_captured_sends_prints_logs_and_warnings_to_the_log(capsys: pytest.CaptureFixture[str]) -> None:
    log = io.StringIO()
    with captured(log, verbose=False):
        print("Evaluation Results: x_eval")
        logging.getLogger("environments.judge_env").warning("judge answered %r", "I don't know.")
        import warnings

        warnings.warn("Trainer requested to ignore max length", UserWarning, stacklevel=1)
    out = capsys.readouterr()
    assert out.out == out.err == ""
    text = log.getvalue()
    assert "Evaluation Results" in text and "judge answered" in text and "ignore max length" in text
    with captured(log, verbose=True):
        print("shown")
    assert capsys.readouterr().out == "shown\n"


@pytest.mark.slow  # the whole demo: three conformance runs and three process runs (about 30 s)
def test_demo_prints_a_short_summary_and_keeps_the_details(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hermes_envs.cli", "demo", "--out", str(tmp_path / "demo-output")],
        cwd=tmp_path,
        env={**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT), "COLUMNS": "160"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed[-4000:]
    for noise in ("Evaluation Results", "accuracy", "judge answered", "PyTorch was not found", "Traceback"):
        assert noise not in printed, noise
    assert len(printed.splitlines()) < 30, printed
    assert "demo passed" in printed.splitlines()[-1]
    for env in ("arithmetic_env", "file_task_env", "judge_env"):
        assert f"{env}.py::" in printed and f"{env}.view.html" in printed
        assert (tmp_path / "demo-output" / f"{env}.view.html").is_file()
    assert "scores [1.0, 1.0]" in printed
    log = (tmp_path / "demo-output" / "demo.log").read_text()
    assert "Evaluation Results" in log and "PASSED         HC401" in log


def test_example_policies_are_available_by_name_to_the_fake_server() -> None:
    from hermes_envs.demo import NAMED_POLICIES, register_example_policies
    from hermes_envs.testing.fake_server._policies import get_policy

    register_example_policies()
    register_example_policies()  # idempotent: the CLI may run it more than once in one process
    body = {
        "messages": [{"role": "user", "content": "What is 12 * 3 + 4? Reply with 'Answer: <integer>'."}],
        "tools": [{"type": "function", "function": {"name": "terminal"}}],
    }
    first = get_policy("arithmetic")(body)
    assert first["tool_calls"][0]["arguments"]["command"] == "python3 -c 'print(12 * 3 + 4)'"
    assert set(NAMED_POLICIES) == {"arithmetic", "file_task", "file_task_mixed", "judge"}
    for name in NAMED_POLICIES:
        assert callable(get_policy(name))
