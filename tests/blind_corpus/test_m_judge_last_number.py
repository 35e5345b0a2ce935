"""m_judge_last_number: the judge's score is read as the LAST number of its reply, so "7/10" becomes 10/10 and
every summary a judge rates "N/10" is paid full credit."""

from __future__ import annotations

from .conftest import group_scores

SCRIPT = {
    "scripts": {
        "^Summarize": {"turns": [{"content": "The council approved electric buses after complaints."}]},
        "^Passage:": {"turns": [{"content": "7/10"}]},
    }
}


async def test_m_judge_last_number() -> None:
    correct, _ = await group_scores("summary_judge_env.py", SCRIPT)
    mutant, _ = await group_scores("m_judge_last_number.py", SCRIPT)
    assert correct == [0.7, 0.7]
    assert mutant == [1.0, 1.0]
