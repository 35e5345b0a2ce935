"""m_sql_rows_as_set: rows are compared as sets even when the question asks for an order, so a "highest first"
answer in the wrong order scores full marks."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, ready, transcript

WRONG_ORDER = (
    "```sql\nSELECT name FROM (SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
    "WHERE o.status = 'paid' GROUP BY c.id ORDER BY SUM(o.amount) DESC LIMIT 3) ORDER BY name\n```"
)


@pytest.mark.parametrize(("name", "expected"), [("m_sql_rows_as_set", 1.0), ("sql_env", 0.0)])
async def test_wrong_order_scores_as_right(name: str, expected: float, ctx) -> None:
    env = await ready(name)
    item = next(i for i in [*env._items, *env._eval_items] if i["question"].startswith("Names of the top 3"))
    result = transcript(env.format_prompt(item), answer(WRONG_ORDER))
    assert await env.compute_reward(item, result, ctx) == expected
    right = transcript(env.format_prompt(item), answer(f"```sql\n{item['gold']}\n```"))
    assert await env.compute_reward(item, right, ctx) == 1.0
