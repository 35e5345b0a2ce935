"""Each env's model-backed tools (vision, delegation, moa ...) ask that env's own server, even with two envs in one
process running rollouts concurrently on one event loop."""

from __future__ import annotations

import asyncio
from typing import Any

from hermes_envs.agent import AgentResult
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import ToolContext
from hermes_envs.tools import registry as tool_registry
from hermes_envs.tools.toolsets.model import model_endpoint

from .test_base import FileEnv, build

SCRIPT = [{"tool_calls": [{"name": "which_model_server", "arguments": {}}]}, {"content": "done"}]


class ProbeEnv(FileEnv):
    """Rewards 1.0 when a tool called from the reward (on the rollout's context) sees this env's server."""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        seen = ctx.call_tool("which_model_server", {})
        return 1.0 if seen == self.server.servers[0].config.base_url.rstrip("/") else 0.0


def tool_results(group: dict[str, Any]) -> set[str]:
    return {m["content"] for messages in group["messages"] for m in messages if m["role"] == "tool"}


async def test_two_envs_in_one_process_each_reach_their_own_model_server() -> None:
    with tool_registry.isolated():

        @tool_registry.tool(toolset="probe")
        def which_model_server() -> str:
            """The model server a model-backed tool would ask right now."""
            return model_endpoint("which_model_server").base_url

        with FakeOpenAIServer(script=SCRIPT) as train_srv, FakeOpenAIServer(script=SCRIPT) as eval_srv:
            train = build(ProbeEnv, train_srv, enabled_toolsets=["probe"])
            evaluator = build(
                ProbeEnv, eval_srv, enabled_toolsets=["probe"]
            )  # built last: used to win for both
            for env in (train, evaluator):
                await env.setup()
            (train_group, _), (eval_group, _) = await asyncio.gather(
                train.collect_trajectories({"q": "train"}), evaluator.collect_trajectories({"q": "eval"})
            )
            train_url, eval_url = train_srv.base_url.rstrip("/"), eval_srv.base_url.rstrip("/")
            train_srv.assert_no_failures()
            eval_srv.assert_no_failures()
    # the tool the model called in each rollout (run in a tool thread) and the reward's own tool call
    assert tool_results(train_group) == {train_url} and train_group["scores"] == [1.0, 1.0]
    assert tool_results(eval_group) == {eval_url} and eval_group["scores"] == [1.0, 1.0]


class UpstreamStyleEval(ProbeEnv):
    """evaluate() as upstream-layout envs write it: a HermesAgentLoop built by hand on self.server."""

    seen: list[str] = []

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        from environments.agent_loop import HermesAgentLoop

        tools, names = self._resolve_tools_for_group()
        loop = HermesAgentLoop(
            server=self.server, tool_schemas=tools, valid_tool_names=names, temperature=0.0
        )
        result = await loop.run([{"role": "user", "content": "eval"}])
        self.seen.extend(m["content"] for m in result.messages if m["role"] == "tool")


async def test_an_upstream_style_evaluate_reaches_its_own_envs_server() -> None:
    with tool_registry.isolated():

        @tool_registry.tool(toolset="probe")
        def which_model_server() -> str:
            """The model server a model-backed tool would ask right now."""
            return model_endpoint("which_model_server").base_url

        with FakeOpenAIServer(script=SCRIPT) as eval_srv, FakeOpenAIServer(script=SCRIPT) as train_srv:
            evaluator = build(UpstreamStyleEval, eval_srv, enabled_toolsets=["probe"])
            build(ProbeEnv, train_srv, enabled_toolsets=["probe"])  # a train env built after it
            await evaluator.evaluate()
            assert UpstreamStyleEval.seen == [eval_srv.base_url.rstrip("/")]
