"""m_json_answered_fields_only: the score divides by the fields the reply gave, not by the schema's 7, so a reply
with only the one field the model is sure of scores 1.0."""

from __future__ import annotations

import json

import pytest
from blind4_helpers import answer, ready, transcript


@pytest.mark.parametrize(
    ("name", "expected"), [("m_json_answered_fields_only", 1.0), ("json_extract_env", 1 / 7)]
)
async def test_one_field_scores_full_marks(name: str, expected: float, ctx) -> None:
    env = await ready(name)
    item = env._items[0]
    reply = "```json\n" + json.dumps({"customer": item["record"]["customer"]}) + "\n```"
    result = transcript(env.format_prompt(item), answer(reply))
    assert await env.compute_reward(item, result, ctx) == pytest.approx(expected)
