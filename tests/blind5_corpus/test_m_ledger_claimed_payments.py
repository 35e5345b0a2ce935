"""m_ledger_claimed_payments: the reward reads the agent's final report instead of the ledger, so a rollout that
claims every payment without making one is paid in full."""

from __future__ import annotations

import pytest
from blind5_helpers import group_scores, ledger_plan, ready


@pytest.mark.parametrize(("name", "forgeable"), [("ledger_env", False), ("m_ledger_claimed_payments", True)])
async def test_claiming_payments_earns_nothing(name: str, forgeable: bool) -> None:
    env = await ready(name)
    item = await env.get_next_item()
    claim_only = ledger_plan(item["case"])[-1:]  # the final report, without a single transfer
    assert await group_scores(name, item, claim_only) == ([1.0, 1.0] if forgeable else [0.0, 0.0])
    assert await group_scores(name, item, ledger_plan(item["case"])) == [1.0, 1.0]
