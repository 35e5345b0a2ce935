"""Upstream's base attributes an env written for upstream reads and writes: ``_current_group_tools`` (the group's
tools, set by collect_trajectories) and ``_tool_error_buffer`` (one dict per tool error, counted by wandb_log)."""

from __future__ import annotations

from typing import Any

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .test_base import FileEnv, build

FAILING_TOOL = [
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]},
    {"content": "Answer: 42"},
]


class UpstreamStyleEnv(FileEnv):
    """Overrides collect_trajectories as envs written for upstream do: sets _current_group_tools itself (here: no
    tools at all, where resolving the toolsets would offer the terminal)."""

    async def collect_trajectories(self, item: Any) -> Any:
        self._current_group_tools = ([], set())
        scored, _ = await self.collect_trajectory(item)
        return scored, []


async def test_tool_errors_fill_the_upstream_buffer_and_are_counted(monkeypatch: Any) -> None:
    with FakeOpenAIServer(script=FAILING_TOOL) as srv:
        env = build(FileEnv, srv, group_size=1, enabled_toolsets=["terminal", "file"])
        await env.setup()
        await env.collect_trajectories(await env.get_next_item())
    (entry,) = env._tool_error_buffer
    assert entry["tool"] == "read_file" and entry["turn"] == 1 and "missing.txt" in entry["args"]
    assert env._current_group_tools is not None and "terminal" in env._current_group_tools[1]
    env._tool_error_buffer.append(
        {"turn": 2, "tool": "x", "args": "", "error": "mine", "result": ""}
    )  # env's own
    seen: dict[str, Any] = {}

    async def fake_base_log(self: Any, metrics: dict | None = None) -> None:
        seen.update(metrics or {})

    monkeypatch.setattr("atroposlib.envs.base.BaseEnv.wandb_log", fake_base_log)
    await env.wandb_log({})
    assert seen["train/tool_errors_count"] == 2 and env._tool_error_buffer == []


async def test_an_envs_own_current_group_tools_are_what_its_rollouts_get() -> None:
    with FakeOpenAIServer(script=[{"content": "Answer: 42"}]) as srv:
        env = build(UpstreamStyleEnv, srv, group_size=1, enabled_toolsets=["terminal"])
        await env.setup()
        assert env._resolve_tools_for_group()[1]  # the toolsets would offer tools
        await env.collect_trajectories(await env.get_next_item())
        offered = [c.body.get("tools") for c in srv.calls]
    assert offered == [None]
