"""Each env keeps its own sandbox settings and model server (its ``runtime``): two envs built in one process (a
trainer running several, the kit building an env again) do not reconfigure each other (A with terminal_timeout=5
used to get B's 500), and an author's own methods are theirs, not wrapped by the base class."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_envs.env import EnvRuntime, HermesAgentBaseEnv
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import ToolContext, cleanup_sandbox, get_sandbox
from hermes_envs.tools import registry as tool_registry
from hermes_envs.tools.sandbox import sandbox_config
from hermes_envs.tools.toolsets.model import model_endpoint

from .test_base import FileEnv, build


class TimeoutEnv(FileEnv):
    """Its reward reports the timeout its rollout's sandbox was created with."""

    seen: list[float] = []

    async def compute_reward(self, item: dict, result: Any, ctx: ToolContext) -> float:
        box = get_sandbox(ctx.task_id)
        assert box is not None
        self.seen.append(box.config.timeout)
        return 1.0


async def test_two_envs_in_one_process_keep_their_own_terminal_timeout() -> None:
    TimeoutEnv.seen = []
    with FakeOpenAIServer(script=[{"content": "Answer: 42"}] * 5) as server:
        first = build(TimeoutEnv, server, terminal_timeout=5, group_size=1)
        second = build(TimeoutEnv, server, terminal_timeout=500, group_size=1)
        for env in (first, second, first):
            await env.setup()
            await env.collect_trajectories({"q": "x"})
        assert TimeoutEnv.seen == [5, 500, 5]
        TimeoutEnv.seen = []
        await asyncio.gather(first.collect_trajectories({"q": "x"}), second.collect_trajectories({"q": "x"}))
    assert sorted(TimeoutEnv.seen) == [5, 500]


async def test_an_authors_method_called_directly_runs_under_the_runtime_bound_around_it() -> None:
    # The base class no longer rewrites compute_reward: a script calling it binds the env's runtime itself.
    TimeoutEnv.seen = []
    with FakeOpenAIServer(script=[{"content": "x"}]) as server:
        first = build(TimeoutEnv, server, terminal_timeout=5)
        second = build(TimeoutEnv, server, terminal_timeout=500)
        for env in (first, second, first):
            with env.runtime.bound():
                await env.compute_reward({}, None, ToolContext(f"runtime-{id(env)}"))
            cleanup_sandbox(f"runtime-{id(env)}")
    assert TimeoutEnv.seen == [5, 500, 5]


async def test_a_tool_context_given_a_runtime_creates_its_sandbox_with_it() -> None:
    with FakeOpenAIServer(script=[{"content": "x"}]) as server:
        first = build(TimeoutEnv, server, terminal_timeout=5)
        build(TimeoutEnv, server, terminal_timeout=500)  # built last: the process default
    ctx = ToolContext("runtime-explicit", runtime=first.runtime)
    try:
        assert ctx.sandbox.config.timeout == 5
    finally:
        ctx.cleanup()


def test_outside_any_env_the_last_configured_settings_apply() -> None:
    # Upstream-layout code that calls the tools outside an env's methods keeps the process-wide default.
    with FakeOpenAIServer(script=[{"content": "x"}]) as server:
        build(TimeoutEnv, server, terminal_timeout=7)
    box = get_sandbox("runtime-outside")
    try:
        assert box is not None and box.config.timeout == 7
    finally:
        cleanup_sandbox("runtime-outside")


class OwnEvaluate(FileEnv):
    """evaluate() as the upstream contract shows it: a HermesAgentLoop the author builds on ``self.server``."""

    seen: list[dict[str, Any]] = []

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        from hermes_envs.agent import HermesAgentLoop

        tools, names = self._resolve_tools_for_group()
        loop = HermesAgentLoop(
            server=self.server, tool_schemas=tools, valid_tool_names=names, temperature=0.0
        )
        result = await loop.run([{"role": "user", "content": "eval"}])
        self.seen.extend(json.loads(m["content"]) for m in result.messages if m["role"] == "tool")


def test_the_base_class_does_not_rewrite_an_authors_methods() -> None:
    assert OwnEvaluate.evaluate is OwnEvaluate.__dict__["evaluate"]
    assert FileEnv.setup is FileEnv.__dict__["setup"]
    assert FileEnv.compute_reward is FileEnv.__dict__["compute_reward"]
    assert HermesAgentBaseEnv.collect_trajectory is HermesAgentBaseEnv.__dict__["collect_trajectory"]
    assert not hasattr(OwnEvaluate.evaluate, "__wrapped__")


async def test_an_authors_own_evaluate_on_self_server_gets_its_envs_runtime() -> None:
    """Two envs with other sandbox settings and model servers run their own evaluate() interleaved on one event loop:
    each tool call of each loop sees its own env's settings and server (the loop binds the runtime of the server)."""
    script = [{"tool_calls": [{"name": "runtime_probe", "arguments": {}}]}, {"content": "done"}]
    OwnEvaluate.seen = []
    with tool_registry.isolated():

        @tool_registry.tool(toolset="probe")
        def runtime_probe(task_id: str) -> str:
            """The settings a tool of this rollout runs with."""
            box = get_sandbox(task_id)
            assert box is not None
            return json.dumps(
                {
                    "server": model_endpoint("runtime_probe").base_url,
                    "timeout": sandbox_config().timeout,
                    "sandbox_timeout": box.config.timeout,
                }
            )

        with FakeOpenAIServer(script=script) as srv_a, FakeOpenAIServer(script=script) as srv_b:
            first = build(OwnEvaluate, srv_a, enabled_toolsets=["probe"], terminal_timeout=5)
            second = build(OwnEvaluate, srv_b, enabled_toolsets=["probe"], terminal_timeout=500)
            assert isinstance(first.runtime, EnvRuntime)
            await asyncio.gather(first.evaluate(), second.evaluate())
            url_a, url_b = srv_a.base_url.rstrip("/"), srv_b.base_url.rstrip("/")
    by_server = {seen["server"]: seen for seen in OwnEvaluate.seen}
    assert by_server == {
        url_a: {"server": url_a, "timeout": 5, "sandbox_timeout": 5},
        url_b: {"server": url_b, "timeout": 500, "sandbox_timeout": 500},
    }
