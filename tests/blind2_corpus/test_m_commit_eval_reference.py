"""m_commit_eval_reference: eval scores exact match with the reference subject while training uses the rubric judge,
so a policy that training rewards fully scores 0 in eval."""

from __future__ import annotations

from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load

GOOD_MESSAGE = (
    "Handle the edge case in the changed function\n\nThe old code failed on real inputs; this change makes the "
    "function behave as callers expect."
)


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][0]["content"].startswith("You review git commit messages"):
        return {"content": "1: yes\n2: yes\n3: yes\n4: yes"}
    return {"content": GOOD_MESSAGE}


async def _train_and_eval(stem: str) -> tuple[list[float], float]:
    module = load(stem)
    with FakeOpenAIServer(policy=_policy) as server:
        env = build(module.CommitJudgeEnv, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(env._items[0])
        env._eval_items = env._eval_items[:3]
        await env.evaluate()
    return list(group["scores"]), dict(env._eval_metrics)["eval/rubric_score"]


async def test_eval_disagrees_with_the_training_reward_on_the_mutant() -> None:
    assert await _train_and_eval("m_commit_eval_reference") == ([1.0, 1.0], 0.0)
    assert await _train_and_eval("commit_judge_env") == ([1.0, 1.0], 1.0)
