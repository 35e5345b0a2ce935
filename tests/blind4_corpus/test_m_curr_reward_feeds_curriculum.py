"""m_curr_reward_feeds_curriculum: the curriculum is updated inside compute_reward, which evaluate() also calls, so
running eval moves the training difficulty (here from level 1 up, with no training group collected)."""

from __future__ import annotations

import pytest
from blind4_helpers import build, chain_solver, ready

from hermes_envs.testing.fake_server import FakeOpenAIServer


@pytest.mark.parametrize(
    ("name", "moved"), [("m_curr_reward_feeds_curriculum", True), ("curriculum_env", False)]
)
async def test_evaluate_changes_the_training_level(name: str, moved: bool) -> None:
    probe = build(name)
    await probe.setup()
    with FakeOpenAIServer(policy=chain_solver(probe)) as srv:
        env = await ready(name, srv.base_url)
        assert env._level == 1
        await env.evaluate()
        srv.assert_no_failures()
    assert dict(env._eval_metrics)["eval/accuracy"] == 1.0
    assert (env._level > 1) is moved
