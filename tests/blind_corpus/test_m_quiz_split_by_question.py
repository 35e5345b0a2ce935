"""m_quiz_split_by_question: the split is drawn over questions, but every element has two questions with the same
answer, so most eval answers were trained on (under the other phrasing): eval measures recall of training."""

from __future__ import annotations

from .conftest import prepared


async def test_m_quiz_split_by_question() -> None:
    correct = await prepared("element_quiz_env.py")
    mutant = await prepared("m_quiz_split_by_question.py")

    def shared(env) -> set[str]:
        return {i["element"] for i in env._eval_items} & {i["element"] for i in env._items}

    assert shared(correct) == set()
    assert len(shared(mutant)) >= len(mutant._eval_items) // 2
