"""m_reorder_boundary: the prompt asks for stock strictly below the level; the gold must agree with the prompt."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _score_literal_answer(name: str) -> float:
    env = build(name)
    await env.setup()
    item = next(i for i in env._items if any(r["stock"] == r["level"] for r in i["rows"]))
    assert "strictly below" in env.format_prompt(item)
    literal = [r["sku"] for r in item["rows"] if r["stock"] < r["level"]]  # exactly what the prompt asks
    text = "SKUS: " + (", ".join(literal) if literal else "none")
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer(text)), None)


async def test_correct_env_credits_the_answer_the_prompt_asks_for() -> None:
    assert await _score_literal_answer("reorder_set_env") == 1.0


async def test_mutant_gold_contradicts_the_prompt() -> None:
    assert await _score_literal_answer("m_reorder_boundary") < 1.0
