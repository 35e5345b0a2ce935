"""m_curr_dropped_group_scores_zero: a group dropped because the model server failed is fed to the curriculum as a
mean score of 0, so a server outage demotes the training level although the model answered nothing."""

from __future__ import annotations

import random

import pytest
from blind4_helpers import load, ready

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import disable_client_retries, fast_retries


@pytest.mark.parametrize(
    ("name", "demoted"), [("m_curr_dropped_group_scores_zero", True), ("curriculum_env", False)]
)
async def test_server_outage_moves_the_level(name: str, demoted: bool) -> None:
    item = load(name).make_chain(2, random.Random(5))
    with fast_retries(), FakeOpenAIServer(policy="answer:text=Answer: 0", faults=["500"]) as srv:
        env = await ready(name, srv.base_url)
        disable_client_retries(env.server)
        env._level = 2
        for _ in range(4):
            group, _ = await env.collect_trajectories(item)
            assert group is None  # every group dropped for the server error
    assert (env._level == 1) is demoted
