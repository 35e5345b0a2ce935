"""m_support_failed_call_credit: a refund call that billing rejected must not be credited as a refund."""

from __future__ import annotations

import json
from typing import Any

from blind3_helpers import answer, build, call, load, tool_result, transcript


async def _score_rejected_refund(name: str, ctx: Any) -> float:
    env = build(name)
    await env.setup()
    ticket = load(name).TICKETS[env._items[0]["ticket_id"]]
    order = next(o for o in ticket["orders"] if o["order_id"] == ticket["damaged"])
    assert ticket["expected_refunds"], "the probe needs a ticket whose refund is due"
    args = {"ticket_id": ticket["ticket_id"], "order_id": order["order_id"], "amount": order["total"]}
    # As the real tool answers without a verified customer (the agent skipped verify_customer).
    rejected = ctx.call_tool("issue_refund", args)
    assert "not verified" in json.loads(rejected)["error"]
    result = transcript(
        env.format_prompt(env._items[0]),
        call("issue_refund", args),
        tool_result(rejected),
        answer(f"I have refunded order {order['order_id']}."),
    )
    return await env.compute_reward(env._items[0], result, ctx)


async def test_correct_env_credits_only_what_billing_recorded(ctx: Any) -> None:
    assert await _score_rejected_refund("support_desk_env", ctx) == 0.3


async def test_mutant_credits_the_rejected_call(ctx: Any) -> None:
    assert await _score_rejected_refund("m_support_failed_call_credit", ctx) == 1.0
