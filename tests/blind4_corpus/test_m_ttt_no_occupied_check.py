"""m_ttt_no_occupied_check: play() never checks that the cell is free, so the model wins by writing X over O's
marks: an illegal game scores 1.0."""

from __future__ import annotations

import pytest
from blind4_helpers import group_scores, ready, ttt_script


@pytest.mark.parametrize(("name", "expected"), [("m_ttt_no_occupied_check", 1.0), ("tictactoe_env", 0.0)])
async def test_overwriting_the_opponent_wins(name: str, expected: float) -> None:
    probe = await ready(name)
    item = next(i for i in [*probe._items, *probe._eval_items] if i["start"] == "....O..X.")
    # X on 8; write over O's centre (5), O blocks on 2, write over that too: the column 2-5-8.
    scores = await group_scores(name, item, ttt_script(item, [5, 2]))
    assert scores == [expected, expected]
