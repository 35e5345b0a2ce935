"""m_json_items_matched_in_place: line items are matched by removing them from the gold list itself (no copy), so
the first scored rollout empties the item's gold items and the next identical, perfect rollout loses that field."""

from __future__ import annotations

import pytest
from blind4_helpers import group_scores, json_reply, ready


@pytest.mark.parametrize(
    ("name", "expected"), [("m_json_items_matched_in_place", [6 / 7, 1.0]), ("json_extract_env", [1.0, 1.0])]
)
async def test_identical_perfect_rollouts_score_differently(name: str, expected: list[float]) -> None:
    probe = await ready(name)
    item = probe._items[0]
    scores = await group_scores(name, item, [{"content": json_reply(item["record"])}])
    assert sorted(scores) == pytest.approx(expected)
