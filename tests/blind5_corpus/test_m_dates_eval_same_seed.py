"""m_dates_eval_same_seed: the eval set is generated with the training seed and years, so every eval question is a
training question: eval accuracy measures recall of trained items, not generalisation."""

from __future__ import annotations

import pytest
from blind5_helpers import ready


@pytest.mark.parametrize(("name", "overlap"), [("dates_env", False), ("m_dates_eval_same_seed", True)])
async def test_no_eval_question_is_trained_on(name: str, overlap: bool) -> None:
    env = await ready(name)
    trained = {i["question"] for i in env.train_items}
    shared = [i for i in env.eval_items if i["question"] in trained]
    assert len(env.eval_items) == 60
    assert len(shared) == (60 if overlap else 0)
