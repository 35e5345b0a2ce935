"""m_support_cutoff: replies cut off by the token limit (finish_reason 'length') are scored like finished ones."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, load


async def _truncated_scores(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["order"] is None)
    reply = (
        f"I'm sorry to hear about the {item['keywords'][0]} problem, and thank you for telling us. Could you share "
        "your order number so that a specialist can look into what happened with your purchase and"
    )
    with FakeOpenAIServer(script=[{"content": reply, "finish_reason": "length"}]) as server:
        env = build(module.SupportReplyEnv, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(item)
    return list(group["scores"])


async def test_a_cut_off_reply_gets_full_marks_on_the_mutant() -> None:
    assert await _truncated_scores("m_support_cutoff") == [1.0, 1.0]
    assert await _truncated_scores("support_reply_env") == [0.0, 0.0]
