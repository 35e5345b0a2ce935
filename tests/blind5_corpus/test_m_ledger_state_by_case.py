"""m_ledger_state_by_case: the ledger is keyed by the case alone, so every rollout of a group (all on the same case)
shares one ledger: a rollout that did nothing is graded on the payments another rollout made."""

from __future__ import annotations

import json
import uuid

import pytest
from blind5_helpers import dispatch, ledger_plan, load, ready, transcript

from hermes_envs.tools import ToolContext


@pytest.mark.parametrize(("name", "shared"), [("ledger_env", False), ("m_ledger_state_by_case", True)])
async def test_a_rollout_is_graded_on_its_own_ledger(name: str, shared: bool) -> None:
    env = await ready(name)
    item = await env.get_next_item()
    worker, idler = f"blind5-w-{uuid.uuid4()}", f"blind5-i-{uuid.uuid4()}"
    for turn in ledger_plan(item["case"])[:-1]:  # the worker rollout pays every invoice
        call = turn["tool_calls"][0]
        assert "ok" in json.loads(await dispatch(call["name"], call["arguments"], worker))
    idle = transcript(env.format_prompt(item), {"role": "assistant", "content": "All invoices are paid."})
    score = await env.compute_reward(item, idle, ToolContext(idler))
    load(name).LEDGERS.clear()
    assert score == (1.0 if shared else 0.0)
