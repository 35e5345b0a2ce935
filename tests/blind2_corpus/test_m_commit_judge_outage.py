"""m_commit_judge_outage: when the judge call fails, every rubric point is counted as met: a meaningless message scores
full marks during a judge outage."""

from __future__ import annotations

from hermes_envs.testing import FakeOpenAIServer
from hermes_envs.testing.retries import fast_retries

from ._helpers import group_scores, load

FAILING_JUDGE = {
    "scripts": {
        "^Write the commit": {"turns": [{"content": "stuff\n\nmore stuff"}]},
        "^Diff:": {"turns": [{"content": "1: no", "fault": {"kind": 500, "times": 1000}}]},
    }
}


async def _outage_score(stem: str) -> list[float]:
    module = load(stem)
    item = module._make_items()[0]
    with FakeOpenAIServer(script=FAILING_JUDGE) as server, fast_retries():
        return await group_scores(module, "CommitJudgeEnv", server, item)


async def test_a_bad_message_scores_full_while_the_judge_is_down_on_the_mutant() -> None:
    assert await _outage_score("m_commit_judge_outage") == [1.0, 1.0]
    assert await _outage_score("commit_judge_env") == [0.5, 0.5]  # the capped fallback: the two code checks
