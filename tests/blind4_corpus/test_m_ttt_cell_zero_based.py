"""m_ttt_cell_zero_based: the tool documents cells 1-9 (5 = centre) but indexes the board from 0, so every
documented move lands one cell later: a winning line played as documented loses its reward."""

from __future__ import annotations

import pytest
from blind4_helpers import group_scores, ready, ttt_script, winning_line


@pytest.mark.parametrize(("name", "expected"), [("m_ttt_cell_zero_based", 0.0), ("tictactoe_env", 1.0)])
async def test_documented_winning_line_is_not_a_win(name: str, expected: float) -> None:
    probe = await ready(name)
    item = next(i for i in probe._items if winning_line(i["start"]))
    scores = await group_scores(name, item, ttt_script(item, winning_line(item["start"]) or []))
    assert scores == [expected, expected]
