"""The correct blind4 envs run offline end to end: a group collected through the real agent loop against a scripted
fake model, a good rollout scored as it should be."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from blind4_helpers import (
    answer,
    build,
    dispatch,
    group_scores,
    json_reply,
    load,
    ready,
    transcript,
    ttt_script,
    winning_line,
)

from hermes_envs.tools import cleanup_sandbox


def _all_items(env: Any) -> list[dict]:
    return [*env._items, *env._eval_items]


def _sql(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in _all_items(env) if i["ordered"])
    script = [
        {"tool_calls": [{"name": "run_sql", "arguments": {"query": "SELECT * FROM orders LIMIT 3"}}]},
        {"content": f"Here it is:\n```sql\n{item['gold']}\n```"},
    ]
    return item, script, 1.0


def _tictactoe(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._items if winning_line(i["start"]))
    return item, ttt_script(item, winning_line(item["start"]) or []), 1.0


def _units(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._items if i["unit"] == "m/s")
    script = [
        {"tool_calls": [{"name": "calc", "arguments": {"expression": "1000 / 3600"}}]},
        {
            "tool_calls": [
                {"name": "convert", "arguments": {"value": 1.0, "from_unit": "km/h", "to_unit": "m/s"}}
            ]
        },
        {"content": f"Distance over time.\nAnswer: {item['value'] * 3.6:.3f} km/h"},
    ]
    return item, script, 1.0


def _json(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    return item, [{"content": json_reply(item["record"])}], 1.0


def _shop(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    product = load("webshop_env").CATALOGUE[item["target"]]
    script = [
        {
            "tool_calls": [
                {"name": "search", "arguments": {"query": f"{product['color']} {product['category']}"}}
            ]
        },
        {"tool_calls": [{"name": "view_product", "arguments": {"product_id": item["target"]}}]},
        {
            "tool_calls": [
                {"name": "add_to_cart", "arguments": {"product_id": item["target"], "qty": item["qty"]}}
            ]
        },
        {"tool_calls": [{"name": "checkout", "arguments": {}}]},
        {"content": f"I ordered {item['qty']} x {product['title']}."},
    ]
    return item, script, 1.0


def _curriculum(env: Any) -> tuple[dict, Any, float]:
    item = load("curriculum_env").make_chain(2, random.Random(5))
    return item, [{"content": f"Working it through.\nAnswer: {item['answer']}"}], 1.0


CASES = {
    "curriculum_env": _curriculum,
    "webshop_env": _shop,
    "json_extract_env": _json,
    "units_env": _units,
    "tictactoe_env": _tictactoe,
    "sql_env": _sql,
}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_good_group_scores_as_expected(name: str) -> None:
    probe = build(name)
    await probe.setup()
    item, script, expected = CASES[name](probe)
    scores = await group_scores(name, item, script)
    assert scores == [expected, expected]


async def test_sql_queries_cannot_touch_host_files(tmp_path) -> None:
    """The correct SQL env's tool refuses ATTACH / VACUUM INTO: no query reads or creates a file outside its db."""
    await ready("sql_env")
    task = f"b4-{uuid.uuid4()}"
    try:
        for query in (f"ATTACH DATABASE '{tmp_path}/a.db' AS a", f"VACUUM INTO '{tmp_path}/v.db'"):
            assert (await dispatch("run_sql", {"query": query}, task)).startswith("error:")
    finally:
        cleanup_sandbox(task)
    assert list(tmp_path.iterdir()) == []


async def test_units_reads_thousands_separators(ctx) -> None:
    env = await ready("units_env")
    item = next(i for i in env._items if i["unit"] == "W" and i["value"] >= 1000)
    result = transcript(env.format_prompt(item), answer(f"Answer: {item['value']:,.2f} W"))
    assert await env.compute_reward(item, result, ctx) == 1.0


async def test_tictactoe_win_in_another_game_is_no_win() -> None:
    """The correct game env scores the game the item asked for: a win played in a different game id scores 0."""
    probe = await ready("tictactoe_env")
    asked = probe._items[0]
    other = next(i for i in probe._items[1:] if winning_line(i["start"]))
    script = ttt_script(other, winning_line(other["start"]) or [])
    assert await group_scores("tictactoe_env", asked, script) == [0.0, 0.0]
