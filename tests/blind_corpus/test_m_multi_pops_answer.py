"""m_multi_pops_answer: the reward pops the item's first answer to log it, mutating the shared item, so the next
rollout of the same group (and every later epoch) can no longer be credited for that answer."""

from __future__ import annotations

from .conftest import answer, group_scores


def pick(env):
    return next(i for i in env._items + env._eval_items if i["question"].startswith("Name one noble gas"))


async def test_m_multi_pops_answer() -> None:
    first_answer = answer("Answer: helium")
    correct, correct_env = await group_scores("multi_answer_env.py", first_answer, pick)
    mutant, mutant_env = await group_scores("m_multi_pops_answer.py", first_answer, pick)
    assert correct == [1.0, 1.0] and len(pick(correct_env)["answers"]) == 6
    assert sorted(mutant) == [0.0, 1.0]  # two identical right answers, scored differently
    assert len(pick(mutant_env)["answers"]) == 4  # and the dataset item lost two answers for good
