"""m_rating_truncated_scored: completions cut off by the token limit are scored like finished ones, so a rating
followed by rambling up to the limit is rewarded; the policy learns to run into max_tokens."""

from __future__ import annotations

from .conftest import group_scores, prepared


async def test_m_rating_truncated_scored() -> None:
    stars = (await prepared("review_rating_env.py"))._items[0]["stars"]
    rambling = [
        {"content": f"<rating>{stars}</rating> " + "and also " * 60, "fault": {"kind": "length", "times": 10}}
    ]
    correct, _ = await group_scores("review_rating_env.py", rambling)
    mutant, _ = await group_scores("m_rating_truncated_scored.py", rambling)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
