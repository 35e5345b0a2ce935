"""m_quiz_reversed_in: the containment test is written backwards (answer IN name), so an empty or one-letter
answer is a substring of every element name and earns full credit."""

from __future__ import annotations

from .conftest import answer, group_scores


def pick(env):
    return next(i for i in env._items + env._eval_items if i["element"] == "Iron")


async def test_m_quiz_reversed_in() -> None:
    empty = answer("<answer></answer>")
    correct, _ = await group_scores("element_quiz_env.py", empty, pick)
    mutant, _ = await group_scores("m_quiz_reversed_in.py", empty, pick)
    assert correct == [0.0, 0.0]
    assert mutant == [1.0, 1.0]
