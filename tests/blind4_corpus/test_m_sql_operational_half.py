"""m_sql_operational_half: any sqlite OperationalError (which is also what a syntax error raises) scores 0.5, so a
reply that is not SQL at all beats an honest wrong query."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, ready, transcript


@pytest.mark.parametrize(("name", "garbage"), [("m_sql_operational_half", 0.5), ("sql_env", 0.0)])
async def test_broken_sql_beats_a_wrong_query(name: str, garbage: float, ctx) -> None:
    env = await ready(name)
    item = next(
        i for i in [*env._items, *env._eval_items] if i["question"].startswith("Which customers live")
    )
    broken = transcript(env.format_prompt(item), answer("```sql\nSELEC name FRM customers\n```"))
    wrong = transcript(
        env.format_prompt(item), answer("```sql\nSELECT name FROM customers WHERE city = 'Porto'\n```")
    )
    assert await env.compute_reward(item, broken, ctx) == garbage
    assert await env.compute_reward(item, wrong, ctx) == 0.0
