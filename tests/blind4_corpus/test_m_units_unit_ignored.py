"""m_units_unit_ignored: the reward reads the number and ignores the unit, so the right number with a wrong unit
scores 1.0 and a right answer in another unit (km/h for m/s) scores 0."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, ready, transcript


@pytest.mark.parametrize(("name", "mutant"), [("m_units_unit_ignored", True), ("units_env", False)])
async def test_unit_decides_nothing(name: str, mutant: bool, ctx) -> None:
    env = await ready(name)
    item = next(i for i in env._items if i["unit"] == "m/s")
    v = item["value"]
    wrong_unit = transcript(env.format_prompt(item), answer(f"Answer: {v:.4f} km/h"))
    other_unit = transcript(env.format_prompt(item), answer(f"Answer: {v * 3.6:.4f} km/h"))
    assert await env.compute_reward(item, wrong_unit, ctx) == (1.0 if mutant else 0.0)
    assert await env.compute_reward(item, other_unit, ctx) == (0.0 if mutant else 1.0)
