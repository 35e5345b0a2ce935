"""m_reorder_recall: listing every SKU must not earn full credit; the set reward has to punish false positives."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _score_everything(name: str) -> float:
    env = build(name)
    await env.setup()
    item = next(
        i for i in env._items if 0 < sum(r["stock"] < r["level"] for r in i["rows"]) < len(i["rows"]) / 2
    )
    everything = "SKUS: " + ", ".join(r["sku"] for r in item["rows"])
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer(everything)), None)


async def test_correct_env_gives_little_for_listing_everything() -> None:
    assert await _score_everything("reorder_set_env") < 0.8


async def test_mutant_gives_full_credit_for_listing_everything() -> None:
    assert await _score_everything("m_reorder_recall") == 1.0
