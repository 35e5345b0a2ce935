"""m_dates_unseeded_shuffle: setup shuffles the training items with the global, unseeded RNG. The checkpoint saves the
item counter, but after a resume it indexes a different order: the run re-serves items it trained on and skips
others instead of continuing where it stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from blind5_helpers import ready


@pytest.mark.parametrize(("name", "continues"), [("dates_env", True), ("m_dates_unseeded_shuffle", False)])
async def test_a_resumed_run_continues_with_the_next_item(name: str, continues: bool, tmp_path: Path) -> None:
    first = await ready(name)
    first.checkpoint_dir, first.wandb_prepend = str(tmp_path), "dates"
    served = [(await first.get_next_item())["question"] for _ in range(5)]
    upcoming = [(await first.get_next_item())["question"] for _ in range(5)]
    first.iter = 5
    first.save_checkpoint(5)

    resumed = await ready(name)
    resumed.checkpoint_dir, resumed.wandb_prepend, resumed.curr_step = str(tmp_path), "dates", 5
    resumed.load_checkpoint()
    assert resumed.iter == 5  # the counter itself is restored in both
    nxt = [(await resumed.get_next_item())["question"] for _ in range(5)]
    assert (nxt == upcoming) is continues
    assert served != upcoming
