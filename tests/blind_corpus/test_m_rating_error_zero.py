"""m_rating_error_zero: when the model request fails, the raw BaseEnv still returns a full group of empty answers
scored 0, so server outages become training data (identical zero groups, empty completions)."""

from __future__ import annotations

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import fast_retries

from .conftest import build


async def group_when_server_fails(name: str):
    with FakeOpenAIServer(script=[{"content": "<rating>3</rating>"}], faults=["500"]) as server:
        env = build(name, server.base_url)
        await env.setup()
        with fast_retries():
            group, _ = await env.collect_trajectories(env._items[0])
    return group


async def test_m_rating_error_zero() -> None:
    assert await group_when_server_fails("review_rating_env.py") is None
    group = await group_when_server_fails("m_rating_error_zero.py")
    assert group is not None and group["scores"] == [0.0, 0.0]
