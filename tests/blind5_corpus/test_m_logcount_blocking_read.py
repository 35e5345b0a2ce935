"""m_logcount_blocking_read: the reward reads the agent's file with the synchronous ``ctx.terminal`` inside the async
``compute_reward``, so the event loop (every other rollout and model call of the env) stalls while it runs."""

from __future__ import annotations

import json

import pytest
from blind5_helpers import ready, ticks_during, transcript


@pytest.mark.parametrize(("name", "yields"), [("logcount_env", True), ("m_logcount_blocking_read", False)])
async def test_reward_leaves_the_event_loop_free(name: str, yields: bool, ctx) -> None:
    env = await ready(name)
    item = env.train_items[0]
    ctx.write_file("status_counts.json", json.dumps(item["counts"]))
    result = transcript(env.format_prompt(item), {"role": "assistant", "content": "Saved."})
    scores = []

    async def reward() -> None:
        scores.append(await env.compute_reward(item, result, ctx))

    ticks = await ticks_during(reward())
    assert scores == [1.0]  # both grade a right file right: the mistake is only where the work runs
    assert (ticks > 0) is yields, f"{name}: other coroutines ran {ticks} times during the reward"
