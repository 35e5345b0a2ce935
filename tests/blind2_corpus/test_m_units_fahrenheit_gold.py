"""m_units_fahrenheit_gold: the gold of every Celsius-to-Fahrenheit item lacks the +32 offset."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


async def _right_answer_score(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["unit"] == "F")
    celsius = float(item["question"].split()[1])
    right = celsius * 9 / 5 + 32  # the physically right conversion, computed here, not taken from the item
    with FakeOpenAIServer(script=[{"content": f"<answer>{right:.2f} F</answer>"}]) as server:
        return await group_scores(module, "UnitConversionEnv", server, item)


async def test_the_right_fahrenheit_value_is_marked_wrong_on_the_mutant() -> None:
    assert await _right_answer_score("m_units_fahrenheit_gold") == [0.2, 0.2]  # format credit only
    assert await _right_answer_score("units_env") == [1.0, 1.0]
