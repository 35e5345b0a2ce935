"""m_curr_checkpoint_index_only: the env checkpoint keeps the item counter but not the curriculum level, so a run
resumed from a checkpoint starts again at level 1 however far the model had got."""

from __future__ import annotations

import pytest
from blind4_helpers import ready


@pytest.mark.parametrize(
    ("name", "kept"), [("m_curr_checkpoint_index_only", False), ("curriculum_env", True)]
)
async def test_resumed_run_keeps_its_level(name: str, kept: bool, tmp_path) -> None:
    first = await ready(name)
    first.checkpoint_dir, first.wandb_prepend = str(tmp_path), "blind4"
    for _ in range(8):
        first.record_group(first._level, 1.0)
    assert first._level == 3
    for _ in range(5):
        await first.get_next_item()
    first.save_checkpoint(7)

    resumed = await ready(name)
    resumed.checkpoint_dir, resumed.wandb_prepend, resumed.curr_step = str(tmp_path), "blind4", 7
    resumed.load_checkpoint()
    assert resumed._index == first._index
    assert (resumed._level == 3) is kept
