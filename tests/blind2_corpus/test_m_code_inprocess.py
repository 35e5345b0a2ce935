"""m_code_inprocess: the reward executes the model's code inside the trainer process, on the host."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load, save_solution_script

MARKER = "escaped_from_the_sandbox.txt"


async def _run(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["task"] == "digit_root")
    source = (
        "import pathlib\n"
        f"pathlib.Path({MARKER!r}).write_text('model code ran here')\n\n"
        + inspect.getsource(module._digit_root)
        + "\n\nsolve = _digit_root\n"
    )
    with FakeOpenAIServer(script=save_solution_script("solution.py", source)) as server:
        return await group_scores(module, "CodeExecEnv", server, item)


async def test_model_code_writes_into_the_trainers_working_directory_on_the_mutant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert await _run("code_exec_env") == [1.0, 1.0]
    assert not (tmp_path / MARKER).exists()  # it ran in the rollout's sandbox
    assert await _run("m_code_inprocess") == [1.0, 1.0]
    assert (tmp_path / MARKER).read_text() == "model code ran here"
