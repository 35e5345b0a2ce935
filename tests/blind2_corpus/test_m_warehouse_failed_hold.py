"""m_warehouse_failed_hold: a hold_units call that failed (the tool raised on a malformed argument) is credited as a
hold that was placed."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


async def _failed_hold_scores(stem: str) -> tuple[list[float], list[str]]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["kind"] == "hold")
    script = [
        {
            "tool_calls": [
                # quantity as a string: the tool raises TypeError, nothing is held
                {
                    "name": "hold_units",
                    "arguments": {"sku": item["skus"][0], "quantity": str(item["quantity"])},
                }
            ]
        },
        {"content": f"Done, they are on hold. Answer: {item['answer']}"},
    ]
    with FakeOpenAIServer(script=script) as server:
        scores = await group_scores(module, "WarehouseEnv", server, item)
        results = [m["content"] for c in server.chat_calls for m in c.body["messages"] if m["role"] == "tool"]
    return scores, results


async def test_a_hold_that_raised_is_credited_on_the_mutant() -> None:
    scores, results = await _failed_hold_scores("m_warehouse_failed_hold")
    assert results and all("error" in r for r in results)  # the hold really failed
    assert scores == [1.0, 1.0]
    scores, _ = await _failed_hold_scores("warehouse_env")
    assert scores == [0.0, 0.0]
