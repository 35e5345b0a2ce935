"""m_summary_judge_unparsed_zero: a judge reply that is not a score (a hedge, a refusal, a reply cut at max_tokens) is
scored 0.0, as a wrong summary, instead of falling back to the key facts: the judge's misbehaviour becomes negative
reward for good summaries."""

from __future__ import annotations

import pytest
from blind5_helpers import group_scores, judged_policy, ready

GOOD = (
    "Payments DB ran out of disk; writes failed for 25 minutes, no data was lost, and disk alerts are coming."
)


@pytest.mark.parametrize(
    ("name", "zeroed"), [("summary_judge_env", False), ("m_summary_judge_unparsed_zero", True)]
)
async def test_a_judge_that_does_not_score_is_not_a_wrong_answer(name: str, zeroed: bool) -> None:
    env = await ready(name)
    item = env.train_items[0]
    scores = await group_scores(name, item, judged_policy(GOOD, "The summary is accurate and concise."))
    assert scores == ([0.0, 0.0] if zeroed else [1.0, 1.0])
