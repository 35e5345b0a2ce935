"""environments/file_task_env.py: scripted transcripts, the reward in the sandbox, conformance, process/evaluate."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.demo import file_task_policy
from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import ENVIRONMENTS, build, example

ENV_FILE = ENVIRONMENTS / "file_task_env.py"
mod = example("file_task_env")


def item_of(kind: str) -> dict:
    return next(i for i in mod._make_items() if i["kind"] == kind)


def write_run_answer(content: str, answer: str = "Fixed it.") -> list[dict[str, Any]]:
    """The transcript of a model that writes task.py, runs it, then answers."""
    return [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "task.py", "content": content}}]},
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "python3 task.py"}}]},
        {"content": answer},
    ]


async def scores(server: FakeOpenAIServer, script: list[dict[str, Any]], item: dict) -> list[float]:
    server.script = script
    env = build(mod.FileTaskEnv, server.base_url)
    await env.setup()
    group, _ = await env.collect_trajectories(item)
    assert env.reward_error_count == 0, env.reward_errors
    return group["scores"]


async def test_good_fix_scores_one(fake_openai: FakeOpenAIServer) -> None:
    item = item_of("off_by_one")
    assert await scores(fake_openai, write_run_answer(item["solution"]), item) == [1.0, 1.0]
    assert set(fake_openai.tools_offered()[0]) >= {"terminal", "write_file"}


async def test_bad_transcripts_score_lower(fake_openai: FakeOpenAIServer) -> None:
    item = item_of("off_by_one")
    good = (await scores(fake_openai, write_run_answer(item["solution"]), item))[0]
    unchanged = (await scores(fake_openai, write_run_answer(item["buggy"]), item))[0]
    claims_only = (await scores(fake_openai, [{"content": "I fixed the script, it works now."}], item))[0]
    n = len(item["expected_output"].splitlines())
    # partial credit: the file exists (0.1), runs (0.2), and n-1 of n lines match (0.7 * (n-1)/n)
    assert unchanged == pytest.approx(0.1 + 0.2 + 0.7 * (n - 1) / n)
    assert good > unchanged > claims_only == 0.0


async def test_script_that_crashes_gets_only_the_file_credit(fake_openai: FakeOpenAIServer) -> None:
    item = item_of("type_error")
    assert await scores(fake_openai, write_run_answer(item["buggy"]), item) == [pytest.approx(0.1)] * 2


async def test_printing_extra_lines_is_not_rewarded(fake_openai: FakeOpenAIServer) -> None:
    item = item_of("fizzbuzz")
    spam = item["solution"] + "for i in range(100):\n    print(i)\n"
    assert (await scores(fake_openai, write_run_answer(spam), item))[0] == pytest.approx(0.3)


async def test_reward_does_not_block_the_event_loop(fake_openai: FakeOpenAIServer) -> None:
    """compute_reward awaits ctx.aterminal: a slow script leaves the loop free for the other rollouts."""
    item = item_of("off_by_one")
    slow = "import time\ntime.sleep(0.6)\n" + item["solution"]
    gaps: list[float] = []

    async def heartbeat() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.02)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    try:
        # the script runs twice per rollout (the model's own run and the reward's), in both rollouts at once
        assert await scores(fake_openai, write_run_answer(slow), item) == [1.0, 1.0]
    finally:
        beat.cancel()
    assert max(gaps) < 0.4, f"the event loop stalled for {max(gaps):.2f} s"


async def test_evaluate_runs_the_agent_loop_with_tools_at_temperature_zero(tmp_path: Path) -> None:
    with FakeOpenAIServer(policy=file_task_policy(), strict=True) as server:
        env = build(mod.FileTaskEnv, server.base_url, tmp_path)
        await env.setup()
        train = {i["buggy"] for i in env._items}
        assert not any(i["buggy"] in train for i in env._eval_items)
        env._eval_items = env._eval_items[:4]  # the full eval set: tests/docs/test_shell_snippets.py
        await env.evaluate()
        server.assert_no_failures()
        assert set(server.temperatures()) == {0.0}
        assert all(set(tools) >= {"terminal", "write_file"} for tools in server.tools_offered())
    metrics = json.loads((tmp_path / "evals" / "metrics.json").read_text())["results"]["all"]
    assert metrics == {"eval/solved_rate": 1.0, "eval/mean_score": 1.0}


# That this env passes the whole catalogue (the default settings, contained) is asserted by the documented hook
# command, `hermes-envs check` on it: tests/docs/test_ci.py::test_hook_passes_on_good_envs_and_blocks_a_broken_one
# (and again by the demo and the workflow step); one more full run here cost 15 s of CPU for the same assertion.


# The documented `process` and `evaluate` commands of this env (fake-server with environments/scripts/
# file_task.yaml) run in tests/docs/test_shell_snippets.py::test_documented_command_runs, with the assertions
# that were here (two scores in (0, 1], a tool turn, the HTML page; the 12 eval samples at temperature 0).
