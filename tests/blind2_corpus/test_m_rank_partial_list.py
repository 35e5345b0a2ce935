"""m_rank_partial_list: a ranking that names only two of the entities, in the right order, scores full marks."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


async def _two_item_answer_score(stem: str) -> list[float]:
    module = load(stem)
    item = module._make_items()[0]
    answer = f"1. {item['gold'][0]}\n2. {item['gold'][1]}"
    with FakeOpenAIServer(script=[{"content": answer}]) as server:
        return await group_scores(module, "RankingEnv", server, item)


async def test_a_two_entity_list_earns_full_credit_on_the_mutant() -> None:
    assert await _two_item_answer_score("m_rank_partial_list") == [1.0, 1.0]
    assert await _two_item_answer_score("ranking_env") == [0.0, 0.0]
