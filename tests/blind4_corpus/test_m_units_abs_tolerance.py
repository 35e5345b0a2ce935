"""m_units_abs_tolerance: an absolute tolerance of 0.5 instead of 1% relative, so on small quantities (a lift of a
few tenths of a kJ) the answer 0 is accepted."""

from __future__ import annotations

import pytest
from blind4_helpers import answer, ready, transcript


@pytest.mark.parametrize(("name", "expected"), [("m_units_abs_tolerance", 1.0), ("units_env", 0.0)])
async def test_zero_is_accepted_for_small_answers(name: str, expected: float, ctx) -> None:
    env = await ready(name)
    item = next(i for i in env._items if i["unit"] == "kJ" and 0.05 < i["value"] < 0.45)
    result = transcript(env.format_prompt(item), answer("Not sure.\nAnswer: 0 kJ"))
    assert await env.compute_reward(item, result, ctx) == expected
