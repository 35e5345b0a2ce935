"""m_numeric_current_item: the reward grades against ``self._current`` (the item most recently handed out by
get_next_item) instead of its ``item`` argument; atroposlib fetches the next item while earlier groups are still
running, so right answers are scored against another question."""

from __future__ import annotations

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build


async def first_group_after_prefetch(name: str) -> list[float]:
    probe = build(name, "http://127.0.0.1:9/v1")
    await probe.setup()
    first = probe._items[0]
    with FakeOpenAIServer(script=[{"content": f"Answer: {first['answer']:.6f}"}]) as server:
        env = build(name, server.base_url)
        await env.setup()
        a = await env.get_next_item()
        await env.get_next_item()  # the next group's item is fetched before this one is scored
        assert a["id"] == first["id"]
        group, _ = await env.collect_trajectories(a)
        server.assert_no_failures()
    return group["scores"]


async def test_m_numeric_current_item() -> None:
    assert await first_group_after_prefetch("numeric_tolerance_env.py") == [1.0, 1.0]
    assert await first_group_after_prefetch("m_numeric_current_item.py") == [0.0, 0.0]
