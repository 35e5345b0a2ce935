"""m_multi_substring: an answer counts when any accepted answer occurs INSIDE the answer line, so hedging by
listing several candidates ("neon, argon or xenon") earns full credit."""

from __future__ import annotations

from .conftest import answer, group_scores


def pick(env):
    return next(i for i in env._items + env._eval_items if i["question"].startswith("Name one noble gas"))


async def test_m_multi_substring() -> None:
    hedge = answer("Answer: neon, argon or xenon")
    correct, _ = await group_scores("multi_answer_env.py", hedge, pick)
    mutant, _ = await group_scores("m_multi_substring.py", hedge, pick)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
