"""m_raw_length_ignored: a completion cut off by the token limit (finish_reason "length") must score 0."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer

CUT = "```python\ndef gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n```\nThis works because the Eu"


async def _scores(name: str) -> list[float]:
    with FakeOpenAIServer(script=[{"content": CUT, "finish_reason": "length"}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        item = next(i for i in env._items if i["name"] == "gcd")
        group, _ = await env.collect_trajectories(item)
        srv.assert_no_failures()
    return group["scores"]


async def test_correct_env_gives_truncated_completions_nothing() -> None:
    assert await _scores("raw_snippet_exec_env") == [0.0, 0.0]


async def test_mutant_rewards_truncated_completions() -> None:
    assert await _scores("m_raw_length_ignored") == [1.0, 1.0]
