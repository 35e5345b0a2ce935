"""m_rank_repeats: items are sampled with replacement, so an entity can appear twice and the exact gold order fails."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


def _items_with_repeats(module) -> list[dict]:
    return [i for i in module._make_items() if len(set(i["shown"])) < len(i["shown"])]


async def _gold_answer_score(module, item: dict) -> list[float]:
    answer = "\n".join(f"{n}. {name}" for n, name in enumerate(item["gold"], 1))
    with FakeOpenAIServer(script=[{"content": answer}]) as server:
        return await group_scores(module, "RankingEnv", server, item)


async def test_the_gold_ranking_itself_scores_zero_on_items_with_a_repeated_entity() -> None:
    mutant = load("m_rank_repeats")
    repeated = _items_with_repeats(mutant)
    assert len(repeated) > 10  # a large share of the data set
    assert await _gold_answer_score(mutant, repeated[0]) == [0.0, 0.0]

    base = load("ranking_env")
    assert _items_with_repeats(base) == []
    assert await _gold_answer_score(base, base._make_items()[0]) == [1.0, 1.0]
