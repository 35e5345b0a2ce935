"""m_json_lazy_braces: the JSON is cut out with a lazy `\\{.*?\\}`, which stops at the first closing brace (inside
the nested line items), so every perfect reply fails to parse and scores 0."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, json_reply, ready, transcript


@pytest.mark.parametrize(("name", "expected"), [("m_json_lazy_braces", 0.0), ("json_extract_env", 1.0)])
async def test_perfect_nested_reply_scores(name: str, expected: float, ctx) -> None:
    env = await ready(name)
    item = env._items[0]
    result = transcript(env.format_prompt(item), answer(json_reply(item["record"])))
    assert await env.compute_reward(item, result, ctx) == expected
