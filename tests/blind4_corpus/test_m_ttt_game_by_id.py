"""m_ttt_game_by_id: games are keyed by the game id instead of the rollout, so the rollouts of a group (same item,
same id) play on one shared board: a rollout finds cells taken that it never played."""

from __future__ import annotations

import uuid

import pytest
from blind4_helpers import dispatch, load, ready


@pytest.mark.parametrize(("name", "shared"), [("m_ttt_game_by_id", True), ("tictactoe_env", False)])
async def test_two_rollouts_of_one_item_share_a_board(name: str, shared: bool) -> None:
    env = await ready(name)
    load(name)._GAMES.clear()  # games of an earlier test in this session
    item = env._items[0]
    free = item["start"].index(".") + 1
    first = await dispatch("play", {"game_id": item["game_id"], "cell": free}, f"b4-{uuid.uuid4()}")
    second = await dispatch("play", {"game_id": item["game_id"], "cell": free}, f"b4-{uuid.uuid4()}")
    assert "error" not in first
    assert ("is taken" in second) is shared
