"""m_sets_recall: the set reward is recall only, so listing every integer earns full marks."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import group_scores, load


async def _list_everything_score(stem: str) -> list[float]:
    module = load(stem)
    item = next(i for i in module._make_items() if i["kind"] == "primes")
    everything = ", ".join(str(n) for n in range(1, 1200))
    with FakeOpenAIServer(script=[{"content": f"Answer: {everything}"}]) as server:
        return await group_scores(module, "NumberSetsEnv", server, item)


async def test_listing_every_number_scores_full_on_the_mutant() -> None:
    assert await _list_everything_score("m_sets_recall") == [1.0, 1.0]
    assert all(score < 0.1 for score in await _list_everything_score("number_sets_env"))
