"""m_support_ledger_by_ticket: one rollout's refund must not count for another rollout of the same ticket."""

from __future__ import annotations

import uuid

from blind3_helpers import answer, build, load, transcript

from hermes_envs.tools import ToolContext, cleanup_sandbox


async def _score_idle_rollout(name: str) -> float:
    env = build(name)
    await env.setup()
    item = env._items[0]
    ticket = load(name).TICKETS[item["ticket_id"]]
    order = next(o for o in ticket["orders"] if o["order_id"] == ticket["damaged"])
    busy, idle = ToolContext(f"blind3-{uuid.uuid4()}"), ToolContext(f"blind3-{uuid.uuid4()}")
    try:
        busy.call_tool("verify_customer", {"ticket_id": ticket["ticket_id"], "email": ticket["email"]})
        done = busy.call_tool(
            "issue_refund",
            {"ticket_id": ticket["ticket_id"], "order_id": order["order_id"], "amount": order["total"]},
        )
        assert "refunded" in done
        # The other rollout of the group did nothing but claim it.
        claim = transcript(env.format_prompt(item), answer(f"I refunded order {order['order_id']}."))
        return await env.compute_reward(item, claim, idle)
    finally:
        busy.cleanup()
        idle.cleanup()
        cleanup_sandbox(ticket["ticket_id"])  # where the mutant keeps its ledger


async def test_correct_env_keeps_rollouts_apart() -> None:
    assert await _score_idle_rollout("support_desk_env") == 0.3


async def test_mutant_credits_the_idle_rollout_with_the_other_ones_refund() -> None:
    assert await _score_idle_rollout("m_support_ledger_by_ticket") == 1.0
