"""m_units_eval_same_seed: the eval items come from the same generator with the same seed as the training items,
so every eval question is also a training question."""

from __future__ import annotations

import pytest
from blind4_helpers import ready


@pytest.mark.parametrize(("name", "leaks"), [("m_units_eval_same_seed", True), ("units_env", False)])
async def test_eval_questions_are_training_questions(name: str, leaks: bool) -> None:
    env = await ready(name)
    train = {i["question"] for i in env._items}
    overlap = [i for i in env._eval_items if i["question"] in train]
    assert len(env._eval_items) == 20
    assert (len(overlap) == 20) is leaks
    assert (len(overlap) == 0) is not leaks
