"""m_curr_eval_at_training_level: evaluate() generates its items at the current training level, so the eval set
changes whenever the curriculum moves and eval numbers from different points of the run are not comparable."""

from __future__ import annotations

import pytest
from blind4_helpers import ready, user_prompts

from hermes_envs.testing.fake_server import FakeOpenAIServer


@pytest.mark.parametrize(
    ("name", "moves"), [("m_curr_eval_at_training_level", True), ("curriculum_env", False)]
)
async def test_eval_set_follows_the_curriculum(name: str, moves: bool) -> None:
    with FakeOpenAIServer(policy="answer:text=Answer: 0") as srv:
        env = await ready(name, srv.base_url)
        await env.evaluate()
        before = sorted(user_prompts(srv))
        srv.reset()
        for _ in range(4):
            env.record_group(env._level, 1.0)
        assert env._level == 2
        await env.evaluate()
        after = sorted(user_prompts(srv))
        srv.assert_no_failures()
    assert len(before) == len(after) == 25
    assert (before != after) is moves
