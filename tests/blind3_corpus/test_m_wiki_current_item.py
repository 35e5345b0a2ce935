"""m_wiki_current_item: a rollout must be scored against its own item, not the item fetched last (groups overlap)."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _score_first_after_second_fetched(name: str) -> float:
    env = build(name)
    await env.setup()
    first = await env.get_next_item()
    await env.get_next_item()  # the next group starts while the first group's rollouts are still being scored
    result = transcript(first["q"], answer(f"Answer: {first['a']} [doc:{first['doc']}]"))
    return await env.compute_reward(first, result, None)


async def test_correct_env_scores_against_the_rollouts_item() -> None:
    assert await _score_first_after_second_fetched("wiki_retrieval_env") == 1.0


async def test_mutant_scores_against_the_last_fetched_item() -> None:
    assert await _score_first_after_second_fetched("m_wiki_current_item") < 1.0
