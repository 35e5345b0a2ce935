"""m_reorder_missing_line_none: an answer without a 'SKUS:' line must score 0, not read as "none"."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _score_no_answer(name: str) -> float:
    env = build(name)
    await env.setup()
    item = next(i for i in env._items if not any(r["stock"] < r["level"] for r in i["rows"]))  # gold is empty
    return await env.compute_reward(
        item, transcript(env.format_prompt(item), answer("I could not tell, sorry.")), None
    )


async def test_correct_env_gives_nothing_without_an_answer_line() -> None:
    assert await _score_no_answer("reorder_set_env") == 0.0


async def test_mutant_reads_a_missing_answer_as_none_and_gives_full_credit() -> None:
    assert await _score_no_answer("m_reorder_missing_line_none") == 1.0
