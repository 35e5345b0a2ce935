"""environments/judge_env.py: one judge call per rollout, keyword fallback, weights and clamping, commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.conformance import run_conformance
from hermes_envs.demo import judge_policy
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import fast_retries

from .conftest import ENVIRONMENTS, SCRIPTS, atropos_command, build, example, run_command

ENV_FILE = ENVIRONMENTS / "judge_env.py"
mod = example("judge_env")
ITEM = next(i for i in mod._make_items() if i["snippet"] == "print(7 // 2, 7 % 2)")
GOOD = "It prints 3 1: // is floor division and % gives the remainder."  # all three keywords
VAGUE = "It prints some numbers."  # no keyword


def transcript(answer: str, judge: dict[str, Any] | str) -> dict[str, Any]:
    """A keyed script: the rollout runs the snippet then answers; the judge request gets ``judge``."""
    judge_turn = judge if isinstance(judge, dict) else {"content": judge}
    return {
        "scripts": {
            "^What does this Python snippet print": {
                "turns": [
                    {
                        "tool_calls": [
                            {
                                "name": "terminal",
                                "arguments": {"command": "python3 -c 'print(7 // 2, 7 % 2)'"},
                            }
                        ]
                    },
                    {"content": answer},
                ]
            },
            "^Snippet:": {"turns": [judge_turn]},
        }
    }


def judge_calls(server: FakeOpenAIServer) -> list[Any]:
    return [c for c in server.chat_calls if c.body["messages"][0]["content"] == mod.JUDGE_RUBRIC]


async def scores(server: FakeOpenAIServer, answer: str, judge: dict[str, Any] | str) -> list[float]:
    server.reset()
    server.script = transcript(answer, judge)
    env = build(mod.JudgeEnv, server.base_url)
    await env.setup()
    with fast_retries():
        group, _ = await env.collect_trajectories(ITEM)
    assert env.reward_error_count == 0, env.reward_errors
    return group["scores"]


async def test_good_answer_scores_above_bad(fake_openai: FakeOpenAIServer) -> None:
    good = await scores(fake_openai, GOOD, "9")
    bad = await scores(fake_openai, VAGUE, "2")
    assert good == [pytest.approx(0.8 * 0.9 + 0.2 * 1.0)] * 2
    assert bad == [pytest.approx(0.8 * 0.2)] * 2
    assert good[0] > bad[0]


async def test_judge_is_called_once_per_rollout_at_temperature_zero(fake_openai: FakeOpenAIServer) -> None:
    await scores(fake_openai, GOOD, "Score: 7/10")
    calls = judge_calls(fake_openai)
    assert len(calls) == 2  # group_size rollouts, one judge call each
    assert all(c.body["temperature"] == 0.0 and "tools" not in c.body for c in calls)
    assert (
        GOOD in calls[0].body["messages"][1]["content"]
        and ITEM["reference"] in calls[0].body["messages"][1]["content"]
    )


@pytest.mark.parametrize("reply", ["Great explanation!", "11", "-3", "", "7 out of 10, maybe 8"])
async def test_garbage_judge_reply_falls_back_to_keywords(fake_openai: FakeOpenAIServer, reply: str) -> None:
    assert await scores(fake_openai, GOOD, reply) == [1.0, 1.0]  # keywords only: all three present
    assert await scores(fake_openai, VAGUE, reply) == [0.0, 0.0]
    assert len(judge_calls(fake_openai)) == 2  # a garbage reply is not retried: still one call per rollout


@pytest.mark.parametrize("fault", [500, "drop", "empty_choices"])
async def test_failing_judge_falls_back_to_keywords(fake_openai: FakeOpenAIServer, fault: Any) -> None:
    half = "It prints 3 1 because of floor division."  # 2 of 3 keywords
    assert (
        await scores(fake_openai, half, {"content": "10", "fault": {"kind": fault, "times": 100}})
        == [pytest.approx(2 / 3)] * 2
    )


async def test_score_is_clamped_and_weighted(fake_openai: FakeOpenAIServer) -> None:
    assert await scores(fake_openai, GOOD, "10") == [1.0, 1.0]
    assert await scores(fake_openai, VAGUE, "0") == [0.0, 0.0]


async def test_keywords_already_in_the_prompt_earn_nothing(fake_openai: FakeOpenAIServer) -> None:
    env = build(mod.JudgeEnv, fake_openai.base_url)
    echo = env.format_prompt(ITEM)
    assert env._keyword_score(ITEM, echo) == 0.0
    item = {**ITEM, "keywords": ["floor", "print"]}  # "print" is in the prompt: only "floor" counts
    assert env._keyword_score(item, "floor") == 1.0


async def test_empty_answer_scores_zero_without_a_judge_call(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script = {"scripts": {"^What does": {"turns": [{"content": ""}]}}}
    env = build(mod.JudgeEnv, fake_openai.base_url)
    await env.setup()
    group, _ = await env.collect_trajectories(ITEM)
    assert group["scores"] == [0.0, 0.0] and judge_calls(fake_openai) == []


async def test_evaluate_uses_the_agent_loop_with_tools(tmp_path: Path) -> None:
    with FakeOpenAIServer(policy=judge_policy(), strict=True) as server:
        env = build(mod.JudgeEnv, server.base_url, tmp_path)
        await env.setup()
        await env.evaluate()
        server.assert_no_failures()
        assert set(server.temperatures()) == {0.0}
        rollouts = [c for c in server.chat_calls if c.body["messages"][0]["content"] == mod.SYSTEM_PROMPT]
        assert rollouts and all(
            "terminal" in tools for tools in server.tools_offered()[: len(rollouts)] if tools
        )
        assert len(judge_calls(server)) == len(env._eval_items)  # one judge call per eval item
    metrics = json.loads((tmp_path / "evals" / "metrics.json").read_text())["results"]["all"]
    assert metrics["eval/tool_use_rate"] == 1.0 and metrics["eval/mean_score"] > 0.9


def test_conformance_passes() -> None:
    report = run_conformance([str(ENV_FILE)])
    assert not report.failed, report.to_text()


@pytest.mark.slow
def test_process_command(tmp_path: Path) -> None:
    """docs command: fake-server with environments/scripts/judge.yaml, then `process`."""
    with FakeOpenAIServer(script=SCRIPTS / "judge.yaml", strict=True) as server:
        done = run_command(atropos_command(ENV_FILE, "process", server.base_url, tmp_path))
        server.assert_no_failures()
        assert len(judge_calls(server)) == 2
    assert done.returncode == 0, done.stderr[-3000:]
    groups = [json.loads(line) for line in (tmp_path / "judge_env.jsonl").read_text().splitlines()]
    assert len(groups) == 1 and len(groups[0]["scores"]) == 2
    assert all(0.0 < s <= 1.0 for s in groups[0]["scores"])
    assert (tmp_path / "judge_env.html").exists()


@pytest.mark.slow
def test_evaluate_command(tmp_path: Path) -> None:
    """docs command: fake-server with environments/scripts/judge.yaml, then `evaluate`."""
    with FakeOpenAIServer(script=SCRIPTS / "judge.yaml", strict=True) as server:
        done = run_command(atropos_command(ENV_FILE, "evaluate", server.base_url, tmp_path))
        server.assert_no_failures()
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((tmp_path / "evals" / "metrics.json").read_text())["results"]["all"]
    assert metrics["eval/tool_use_rate"] == 1.0 and metrics["eval/mean_score"] > 0.5
