"""m_kb_current_item: the reward scores against the item last handed out by get_next_item, not the rollout's own
item, so with several groups in flight a right answer is scored against another question."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


async def _first_item_scores(stem: str) -> list[float]:
    module = load(stem)
    with FakeOpenAIServer(script=[{"content": "unused"}]) as server:
        env = build(module.StationKBEnv, server.base_url)
        await env.setup()
        first = await env.get_next_item()
        await env.get_next_item()  # atroposlib fetches the next item while the first group still runs
        server.script = [{"content": f"Answer: {first['answer']} [{first['doc']}]"}]
        group, _ = await env.collect_trajectories(first)
    return list(group["scores"])


async def test_a_right_answer_is_scored_against_the_next_item_on_the_mutant() -> None:
    assert await _first_item_scores("m_kb_current_item") == [0.0, 0.0]
    assert await _first_item_scores("station_kb_env") == [1.0, 1.0]
