"""m_ttt_eval_in_train: the training items are all the games, eval games included, so eval win rate measures
games the policy was trained on."""

from __future__ import annotations

import pytest
from blind4_helpers import ready


@pytest.mark.parametrize(("name", "leaks"), [("m_ttt_eval_in_train", True), ("tictactoe_env", False)])
async def test_eval_games_are_served_for_training(name: str, leaks: bool) -> None:
    env = await ready(name)
    served = {(await env.get_next_item())["start"] for _ in range(40)}
    eval_starts = {i["start"] for i in env._eval_items}
    assert bool(served & eval_starts) is leaks
