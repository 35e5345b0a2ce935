"""m_units_best_tag: a reply that sprays several <answer> tags is credited for the best one."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


async def _spray_score(stem: str) -> list[float]:
    module = load(stem)
    item = module._make_items()[0]
    gold, unit = item["answer"], item["unit"]
    guesses = [gold * f for f in (0.5, 0.8, 1.0, 1.25, 2.0)]
    spray = " or ".join(f"<answer>{g:.2f} {unit}</answer>" for g in guesses)
    with FakeOpenAIServer(script=[{"content": f"It is one of these: {spray}"}]) as server:
        return await group_scores(module, "UnitConversionEnv", server, item)


async def test_several_tags_earn_full_credit_on_the_mutant_and_nothing_on_the_base() -> None:
    assert await _spray_score("m_units_best_tag") == [1.0, 1.0]
    assert await _spray_score("units_env") == [0.0, 0.0]
