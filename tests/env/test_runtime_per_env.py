"""Each env keeps its own sandbox settings: two envs built in one process (a trainer running several, the kit
building an env again) do not reconfigure each other (A with terminal_timeout=5 used to get B's 500)."""

from __future__ import annotations

from typing import Any

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import ToolContext, cleanup_sandbox, get_sandbox

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
    with FakeOpenAIServer(script=[{"content": "Answer: 42"}]) as server:
        first = build(TimeoutEnv, server, terminal_timeout=5, group_size=1)
        second = build(TimeoutEnv, server, terminal_timeout=500, group_size=1)
        for env in (first, second, first):
            await env.setup()
            await env.compute_reward({}, None, ToolContext(f"runtime-{id(env)}"))
            cleanup_sandbox(f"runtime-{id(env)}")
    assert TimeoutEnv.seen == [5, 500, 5]


def test_outside_any_env_the_last_configured_settings_apply() -> None:
    # Upstream-layout code that calls the tools outside an env's methods keeps the process-wide default.
    with FakeOpenAIServer(script=[{"content": "x"}]) as server:
        build(TimeoutEnv, server, terminal_timeout=7)
    box = get_sandbox("runtime-outside")
    try:
        assert box is not None and box.config.timeout == 7
    finally:
        cleanup_sandbox("runtime-outside")
