"""The env's tool-result budget and tool timeout settings reach every rollout's agent loop."""

from __future__ import annotations

import pytest

from hermes_envs.env import current_env
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import active_sandboxes

from .test_base import FileEnv, build

LONG_OUTPUT = [
    {"tool_calls": [{"name": "terminal", "arguments": {"command": "seq 1 20000; echo 42 > answer.txt"}}]},
    {"content": "Answer: 42"},
]


async def test_a_long_terminal_result_is_saved_and_previewed_per_the_env_budget() -> None:
    before = set(active_sandboxes())  # what other tests of this worker left is not this test's to judge
    with FakeOpenAIServer(script=LONG_OUTPUT) as server:
        env = build(FileEnv, server, default_result_size_chars=2_000, preview_size_chars=300, group_size=1)
        await env.setup()
        group, _ = await env.collect_trajectories(await env.get_next_item())
        server.assert_no_failures()
        second_request = server.chat_calls[1].body["messages"]
    tool_message = group["messages"][0][2]
    assert tool_message["role"] == "tool"
    assert (
        "<persisted-output>" in tool_message["content"] and "Full output saved to" in tool_message["content"]
    )
    assert len(tool_message["content"]) < 1_000
    assert second_request[2]["content"] == tool_message["content"]  # the model saw the preview, not 100 KB
    assert group["scores"] == [1.0] and set(active_sandboxes()) <= before


async def test_overrides_for_one_tool_apply_only_to_it() -> None:
    with FakeOpenAIServer(script=LONG_OUTPUT) as server:
        env = build(FileEnv, server, tool_result_overrides={"terminal": 500}, group_size=1)
        await env.setup()
        group, _ = await env.collect_trajectories(await env.get_next_item())
    assert len(group["messages"][0][2]["content"]) < 1_500


def test_budget_and_timeout_settings_are_validated() -> None:
    from hermes_envs.env import HermesAgentEnvConfig

    with pytest.raises(ValueError, match="default_result_size_chars"):
        HermesAgentEnvConfig(default_result_size_chars=0)
    with pytest.raises(ValueError, match="tool_call_timeout"):
        HermesAgentEnvConfig(tool_call_timeout=-1)
    assert HermesAgentEnvConfig(tool_call_timeout=None).tool_call_timeout is None


async def test_current_env_is_the_env_most_recently_built() -> None:
    with FakeOpenAIServer(script=LONG_OUTPUT) as server:
        env = build(FileEnv, server)
        assert current_env() is env


async def test_wandb_rollouts_show_tool_calls_and_results() -> None:
    with FakeOpenAIServer(script=LONG_OUTPUT) as server:
        env = build(FileEnv, server, group_size=2, num_rollouts_per_group_for_logging=5)
        await env.setup()
        group, _ = await env.collect_trajectories(await env.get_next_item())
        await env.add_rollouts_for_wandb(group)
    [rows] = env.rollouts_for_wandb
    assert len(rows) == 2  # never more than the group has, whatever the setting asks for
    text, score = rows[0]
    assert score == 1.0
    assert "[USER]\nwrite 42" in text and "[TOOL CALL] terminal(" in text and "[TOOL RESULT] " in text
    assert "[ASSISTANT]\nAnswer: 42" in text
