"""m_judge_neutral_on_error: when the judge request fails the reward silently returns 0.5, so a judge outage
trains on made-up mid scores and nothing is counted as a reward error."""

from __future__ import annotations

from hermes_envs.testing.retries import fast_retries

from .conftest import group_scores

FAILING_JUDGE = {
    "scripts": {
        "^Summarize": {"turns": [{"content": "The council approved electric buses after complaints."}]},
        "^Passage:": {"turns": [{"content": "9", "fault": {"kind": 500, "times": 100}}]},
    }
}


async def test_m_judge_neutral_on_error() -> None:
    with fast_retries():
        correct, correct_env = await group_scores("summary_judge_env.py", FAILING_JUDGE)
        mutant, mutant_env = await group_scores("m_judge_neutral_on_error.py", FAILING_JUDGE)
    assert correct_env.reward_error_count == 2 and correct == [0.0, 0.0]  # loud: counted as reward errors
    assert mutant_env.reward_error_count == 0 and mutant == [0.5, 0.5]  # silent: an invented score
