"""m_repo_host_grading: grading copies the package to one fixed host folder, so a later rollout that wrote nothing
is credited for an earlier rollout's files (and the model's code runs on the host)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


async def _fixed_then_idle(
    stem: str, grading_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list, list]:
    module = load(stem)
    if hasattr(module, "GRADING_DIR"):
        monkeypatch.setattr(module, "GRADING_DIR", grading_dir)  # keep the test's host writes in tmp_path
    item = next(i for i in module._make_items() if i["bug"] == "word_count")
    core = "\n\n".join(module.CORRECT.values())
    fixed = [
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "textstats/__init__.py", "content": module.INIT},
                },
                {"name": "write_file", "arguments": {"path": "textstats/core.py", "content": core}},
            ]
        },
        {"content": "Fixed."},
    ]
    idle = [{"content": "I fixed it."}]  # saves nothing
    with FakeOpenAIServer(script=fixed) as server:
        env = build(module.RepoTestsEnv, server.base_url)
        await env.setup()
        first, _ = await env.collect_trajectories(item)
    with FakeOpenAIServer(script=idle) as server:
        env = build(module.RepoTestsEnv, server.base_url)
        await env.setup()
        second, _ = await env.collect_trajectories(item)
    return list(first["scores"]), list(second["scores"])


async def test_a_rollout_that_saved_nothing_is_credited_with_stale_host_files_on_the_mutant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    grading = tmp_path / "grading"
    assert await _fixed_then_idle("m_repo_host_grading", grading, monkeypatch) == ([1.0, 1.0], [1.0, 1.0])
    assert (grading / "textstats" / "core.py").exists()  # the model's code sits on the host after the run
    assert await _fixed_then_idle("repo_tests_env", tmp_path / "unused", monkeypatch) == (
        [1.0, 1.0],
        [0.0, 0.0],
    )
