"""HermesAgentBaseEnv against the fake server: rollouts, rewards, sandbox cleanup, metrics, tool resolution."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs.agent import AgentResult
from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig, register_distribution
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.offline import offline_tokenizer_path
from hermes_envs.tools import ToolContext, active_sandboxes, cleanup_sandbox

SCRIPT = [
    {
        "tool_calls": [
            {"name": "terminal", "arguments": {"command": "echo 42 > answer.txt && cat answer.txt"}}
        ]
    },
    {"content": "Answer: 42"},
]


class FileEnv(HermesAgentBaseEnv):
    """Rewards 1.0 when the rollout's sandbox holds answer.txt with 42 (verified through ToolContext)."""

    name = "file-env"
    seen_ctx: list[ToolContext] = []

    async def setup(self) -> None:
        self.items = [{"q": "write 42"}]

    async def get_next_item(self) -> dict:
        return self.items[0]

    def format_prompt(self, item: dict) -> str:
        return item["q"]

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        self.seen_ctx.append(ctx)
        out = ctx.terminal("cat answer.txt")
        return 1.0 if out["output"].strip() == "42" else 0.0

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        return None


class RaisingEnv(FileEnv):
    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return result["messages"]  # type: ignore[index]  # the classic mistake


def build(cls: type, server: FakeOpenAIServer, **config: Any) -> HermesAgentBaseEnv:
    settings = {
        "tokenizer_name": offline_tokenizer_path(),
        "use_wandb": False,
        "group_size": 2,
        "enabled_toolsets": ["terminal"],
        **config,
    }
    cfg = HermesAgentEnvConfig(**settings)
    servers = [
        APIServerConfig(
            base_url=server.base_url, api_key="x", model_name="fake", server_type="openai", health_check=False
        )
    ]
    return cls(cfg, servers, slurm=False, testing=False)


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(script=SCRIPT) as srv:
        yield srv
        srv.assert_no_failures()


async def test_group_is_scored_in_the_rollouts_own_sandbox(server: FakeOpenAIServer) -> None:
    env = build(FileEnv, server)
    await env.setup()
    group, backlog = await env.collect_trajectories(await env.get_next_item())
    assert backlog == [] and group["scores"] == [1.0, 1.0]
    for tokens, masks, messages in zip(group["tokens"], group["masks"], group["messages"]):
        assert len(tokens) == len(masks) > 0
        assert masks[0] == -100 and any(m != -100 for m in masks)
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    # each rollout had its own task id, and every sandbox was removed afterwards
    assert len({c.task_id for c in FileEnv.seen_ctx[-2:]}) == 2
    assert not any(t in active_sandboxes() for t in (c.task_id for c in FileEnv.seen_ctx[-2:]))


async def test_every_rollout_of_a_group_is_offered_the_same_tools() -> None:
    register_distribution("coin-flip-test", {"terminal": 0.5, "file": 0.5})
    server = FakeOpenAIServer(policy=lambda body: {"content": "Answer: 0"}).start()
    env = build(FileEnv, server, enabled_toolsets=None, distribution="coin-flip-test", group_size=4)
    await env.setup()
    for _ in range(4):
        start = len(server.chat_calls)
        await env.collect_trajectories(await env.get_next_item())
        offered = {
            tuple(sorted(t["function"]["name"] for t in c.body.get("tools", [])))
            for c in server.chat_calls[start:]
        }
        assert len(offered) == 1, f"rollouts of one group saw different tools: {offered}"
    server.stop()


async def test_reward_exception_is_logged_and_counted(server: FakeOpenAIServer, caplog: Any) -> None:
    env = build(RaisingEnv, server)
    await env.setup()
    with caplog.at_level(logging.ERROR):
        group, _ = await env.collect_trajectories(await env.get_next_item())
    assert group["scores"] == [0.0, 0.0]
    assert env.reward_error_count == 2 and "TypeError" in env.reward_errors[0]
    assert "compute_reward raised" in caplog.text and "Traceback" in caplog.text


async def test_reward_exception_raises_when_asked(server: FakeOpenAIServer) -> None:
    env = build(RaisingEnv, server, raise_on_reward_error=True)
    await env.setup()
    with pytest.raises(TypeError):
        await env.collect_trajectory(await env.get_next_item())


async def test_wandb_log_adds_tool_and_reward_error_metrics(
    server: FakeOpenAIServer, monkeypatch: Any
) -> None:
    env = build(RaisingEnv, server)
    await env.setup()
    await env.collect_trajectories(await env.get_next_item())
    seen: dict[str, Any] = {}

    async def fake_base_log(self: Any, metrics: dict | None = None) -> None:
        seen.update(metrics or {})

    monkeypatch.setattr("atroposlib.envs.base.BaseEnv.wandb_log", fake_base_log)
    await env.wandb_log({"mine": 1})
    assert seen["mine"] == 1 and seen["train/tool_errors_count"] == 0 and seen["train/reward_errors"] == 2


async def test_no_reward_call_and_no_score_when_the_model_call_failed() -> None:
    # the first model call fails with HTTP 500: the rollout is unusable, not a 0.0 (see test_server_errors.py)
    with FakeOpenAIServer(script=[{"content": "never sent", "fault": 500}]) as srv:
        env = build(FileEnv, srv)
        await env.setup()
        calls_before = len(FileEnv.seen_ctx)
        from hermes_envs.testing.retries import disable_client_retries, fast_retries

        disable_client_retries(env.server)
        with fast_retries():
            scored, _ = await env.collect_trajectory(await env.get_next_item())
        assert scored is None and len(FileEnv.seen_ctx) == calls_before
        assert [c.status for c in srv.chat_calls] == [500]


def test_unknown_toolset_is_a_clear_error(server: FakeOpenAIServer) -> None:
    env = build(FileEnv, server, enabled_toolsets=["terminall"])
    with pytest.raises(ValueError, match="terminall"):
        env._resolve_tools_for_group()


def test_upstream_layout_imports_are_ours() -> None:
    from environments.agent_loop import AgentResult as A
    from environments.hermes_base_env import HermesAgentBaseEnv as B
    from environments.tool_context import ToolContext as C

    assert (A, B, C) == (AgentResult, HermesAgentBaseEnv, ToolContext)


async def test_a_loop_built_on_self_server_recovers_text_calls_with_the_envs_parser() -> None:
    """evaluate() written as the contract shows (no parser argument) uses the env's tool_call_parser."""
    from hermes_envs.agent import HermesAgentLoop, tools_used

    qwen = "<tool_call>\n<function=terminal>\n<parameter=command>\necho hi\n</parameter>\n</function>\n</tool_call>"
    with FakeOpenAIServer(script=[{"content": qwen}, {"content": "done"}]) as srv:
        env = build(FileEnv, srv, tool_call_parser="qwen3_coder")
        tools, names = env._resolve_tools_for_group()
        loop = HermesAgentLoop(server=env.server, tool_schemas=tools, valid_tool_names=names, max_turns=3)
        try:
            result = await loop.run([{"role": "user", "content": "go"}])
        finally:
            cleanup_sandbox(loop.task_id)  # the terminal call made one; other tests check none is left
        srv.assert_no_failures()
    assert loop.tool_call_parser == "qwen3_coder"
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert tools_used(result) == ["terminal"]
    # a loop on another server, or with an explicit parser, is unchanged
    assert HermesAgentLoop(object(), [], []).tool_call_parser == "hermes"
    assert HermesAgentLoop(env.server, [], [], tool_call_parser=None).tool_call_parser is None
