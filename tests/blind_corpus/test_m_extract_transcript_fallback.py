"""m_extract_transcript_fallback: when the rollout ends without an EMAILS block (out of turns, cut off), the reward
harvests addresses from the whole conversation, which includes the prompt itself: a rollout that never answered
gets full credit."""

from __future__ import annotations

from .conftest import group_scores, terminal


def pick(env):
    return next(i for i in env._items if i["emails"])


async def test_m_extract_transcript_fallback() -> None:
    never_answers = [terminal("echo thinking")]  # one tool turn, then the turn budget (1) is spent
    correct, _ = await group_scores("entity_extraction_env.py", never_answers, pick, max_agent_turns=1)
    mutant, _ = await group_scores("m_extract_transcript_fallback.py", never_answers, pick, max_agent_turns=1)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
