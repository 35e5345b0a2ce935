"""m_units_eval_exact_match: evaluate() grades by exact match of the value rounded to 2 decimals instead of the
training reward, so answers the training reward accepts (within 1%) count as wrong in eval."""

from __future__ import annotations

import re

import pytest
from blind4_helpers import answer, build, ready, transcript

from hermes_envs.testing.fake_server import FakeOpenAIServer


@pytest.mark.parametrize(("name", "accuracy"), [("m_units_eval_exact_match", 0.0), ("units_env", 1.0)])
async def test_eval_disagrees_with_the_training_reward(name: str, accuracy: float, ctx) -> None:
    probe = build(name)
    await probe.setup()
    replies = {i["question"]: f"Answer: {i['value'] * 1.004:.6f} {i['unit']}" for i in probe._eval_items}
    for item in probe._eval_items:  # the training reward accepts every one of these replies
        result = transcript(probe.format_prompt(item), answer(replies[item["question"]]))
        assert await probe.compute_reward(item, result, ctx) == 1.0
    script = {"scripts": {re.escape(q): {"turns": [{"content": r}]} for q, r in replies.items()}}
    with FakeOpenAIServer(script=script) as srv:
        env = await ready(name, srv.base_url)
        await env.evaluate()
        srv.assert_no_failures()
    assert dict(env._eval_metrics)["eval/accuracy"] == accuracy
