"""m_rank_subset: a ranking that names only some records must not earn full credit (the correct env gives 0)."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _score_partial(name: str) -> float:
    env = build(name)
    await env.setup()
    item = env._items[0]
    sign = -1 if item["descending"] else 1
    rows = sorted(item["rows"], key=lambda r: sign * r[item["key"]])
    first, last = rows[0]["name"], rows[-1]["name"]  # two records, in the right order
    assert rows[0][item["key"]] != rows[-1][item["key"]]
    return await env.compute_reward(
        item, transcript(env.format_prompt(item), answer(f"ORDER: {first} > {last}")), None
    )


async def _score_full(name: str) -> float:
    env = build(name)
    await env.setup()
    item = env._items[0]
    sign = -1 if item["descending"] else 1
    rows = sorted(item["rows"], key=lambda r: sign * r[item["key"]])
    text = "ORDER: " + " > ".join(r["name"] for r in rows)
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer(text)), None)


async def test_correct_env_rejects_partial_ranking() -> None:
    assert await _score_full("ranking_env") == 1.0
    assert await _score_partial("ranking_env") == 0.0


async def test_mutant_gives_full_credit_to_two_names() -> None:
    assert await _score_full("m_rank_subset") == 1.0
    assert await _score_partial("m_rank_subset") == 1.0
