"""m_summary_judge_raw_scale: the judge's 0-10 grade is returned unscaled, so judged rollouts score up to 10 while the
fallback scores at most 1: a rollout's reward depends on whether the judge answered, not on its summary."""

from __future__ import annotations

import pytest
from blind5_helpers import group_scores, judged_policy, ready

GOOD = (
    "Payments DB ran out of disk; writes failed for 25 minutes, no data was lost, and disk alerts are coming."
)


@pytest.mark.parametrize(("name", "raw"), [("summary_judge_env", False), ("m_summary_judge_raw_scale", True)])
async def test_judged_and_fallback_scores_share_one_scale(name: str, raw: bool) -> None:
    env = await ready(name)
    item = env.train_items[0]
    judged = await group_scores(name, item, judged_policy(GOOD, "SCORE: 9"))
    fallback = await group_scores(name, item, judged_policy(GOOD, "I can't grade this."))
    assert fallback == [1.0, 1.0]  # all key facts covered
    assert judged == ([9.0, 9.0] if raw else [0.9, 0.9])
    assert all(0.0 <= s <= 1.0 for s in judged) is not raw
