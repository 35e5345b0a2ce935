"""m_warehouse_holds: holds are kept per SKU for the whole process, so rollouts see each other's holds and a
correct answer (the availability the tool reported after its own hold) is scored wrong."""

from __future__ import annotations

import json
from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


def _clerk(item: dict) -> Any:
    """Hold the units, read the availability, report what the tool said."""

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        sku = item["skus"][0]
        if turn == 0:
            return {
                "tool_calls": [
                    {"name": "hold_units", "arguments": {"sku": sku, "quantity": item["quantity"]}}
                ]
            }
        if turn == 1:
            return {"tool_calls": [{"name": "stock_level", "arguments": {"sku": sku}}]}
        return {"content": f"Answer: {json.loads(messages[-1]['content'])['available']}"}

    return policy


async def _two_groups(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["kind"] == "hold")
    with FakeOpenAIServer(policy=_clerk(item)) as server:
        first = await group_scores(module, "WarehouseEnv", server, item)
        second = await group_scores(module, "WarehouseEnv", server, item)
    return first + second


async def test_holds_leak_between_rollouts_on_the_mutant() -> None:
    mutant = await _two_groups("m_warehouse_holds")
    assert (
        mutant.count(1.0) <= 1 and mutant.count(0.0) >= 3
    )  # only a rollout that ran alone first can be right
    assert await _two_groups("warehouse_env") == [1.0, 1.0, 1.0, 1.0]
