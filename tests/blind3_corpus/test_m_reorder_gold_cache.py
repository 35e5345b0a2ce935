"""m_reorder_gold_cache: the gold of one table must not be reused for another table of the same warehouse."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


def _gold(item: dict) -> set[str]:
    return {r["sku"] for r in item["rows"] if r["stock"] < r["level"]}


async def _second_item_score(name: str) -> float:
    env = build(name)
    await env.setup()
    first = env._items[0]
    second = next(
        i for i in env._items[1:] if i["warehouse"] == first["warehouse"] and _gold(i) != _gold(first)
    )
    await env.compute_reward(first, transcript(env.format_prompt(first), answer("SKUS: none")), None)
    exact = "SKUS: " + (", ".join(sorted(_gold(second))) or "none")
    return await env.compute_reward(second, transcript(env.format_prompt(second), answer(exact)), None)


async def test_correct_env_scores_each_table_on_its_own_gold() -> None:
    assert await _second_item_score("reorder_set_env") == 1.0


async def test_mutant_scores_the_second_table_against_the_first() -> None:
    assert await _second_item_score("m_reorder_gold_cache") < 1.0
