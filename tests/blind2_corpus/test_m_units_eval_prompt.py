"""m_units_eval_prompt: evaluate() drops the system prompt that defines the answer format training uses."""

from __future__ import annotations

from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    """A model that uses the tag only when the system prompt asks for it (as a trained policy would)."""
    told = any(m["role"] == "system" and "<answer>" in m["content"] for m in body["messages"])
    return {"content": "<answer>1.00 mi</answer>" if told else "About one mile."}


async def _eval_and_train_prompts(stem: str) -> tuple[list[str], list[str]]:
    module = load(stem)
    with FakeOpenAIServer(policy=_policy) as server:
        env = build(module.UnitConversionEnv, server.base_url)
        await env.setup()
        await env.collect_trajectories(env._items[0])
        train_roles = [c.body["messages"][0]["role"] for c in server.chat_calls]
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        eval_roles = [c.body["messages"][0]["role"] for c in server.chat_calls][len(train_roles) :]
    return train_roles, eval_roles


async def test_eval_requests_lack_the_system_prompt_training_sends() -> None:
    train, evaluation = await _eval_and_train_prompts("m_units_eval_prompt")
    assert set(train) == {"system"} and set(evaluation) == {"user"}
    train, evaluation = await _eval_and_train_prompts("units_env")
    assert set(train) == {"system"} and set(evaluation) == {"system"}
