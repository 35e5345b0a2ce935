"""What every env entry point runs inside: the env's own model server for the tools, and (``evaluate``) a watch
on the agent loop's results so eval rollouts that failed on the model server are reported, not silently scored.

``HermesAgentBaseEnv.__init_subclass__`` wraps the overrides an author writes, so upstream-layout envs get both
without changing a line.
"""

from __future__ import annotations

import functools
import inspect
from typing import Protocol

from hermes_envs.agent.result import AgentResult

__all__ = ["ENV_ENTRY_POINTS", "in_env_context", "watching_eval"]

#: Env methods whose body (and the tasks and tool threads it starts) sees the env's own model server; overrides in
#: subclasses are wrapped too (``__init_subclass__``), so an author's ``evaluate`` gets it without doing anything.
ENV_ENTRY_POINTS = (
    "setup",
    "evaluate",
    "collect_trajectory",
    "collect_trajectories",
    "compute_reward",
    "run_agent",
    "score_rollout",
    "process_manager",
    "env_manager",
)


def in_env_context(fn: object) -> object:
    """Wrap the coroutine method ``fn`` so it runs with its env's model endpoint and sandbox settings bound for
    the tools."""
    if not inspect.iscoroutinefunction(fn) or getattr(fn, "_hermes_env_context", False):
        return fn

    @functools.wraps(fn)
    async def bound(self: object, *args: object, **kwargs: object) -> object:
        from hermes_envs.tools.sandbox import using_config
        from hermes_envs.tools.toolsets.model import using_model_endpoint

        with (
            using_model_endpoint(getattr(self, "_tool_model_endpoint", None)),
            using_config(getattr(self, "_sandbox_config", None)),
        ):
            return await fn(self, *args, **kwargs)

    bound._hermes_env_context = True  # type: ignore[attr-defined]
    return bound


class _EvalEnv(Protocol):
    """The env an ``evaluate`` runs on: it reports the watched rollouts that failed on the model server."""

    def _report_eval_server_errors(self, seen: list[AgentResult]) -> None: ...


def watching_eval(fn: object) -> object:
    """Wrap an ``evaluate`` so eval rollouts that failed on the model server are counted and reported once."""
    if not inspect.iscoroutinefunction(fn) or getattr(fn, "_hermes_eval_watched", False):
        return fn

    @functools.wraps(fn)
    async def watched(self: _EvalEnv, *args: object, **kwargs: object) -> object:
        from hermes_envs.agent._observe import watch_results

        with watch_results() as seen:
            try:
                return await fn(self, *args, **kwargs)
            finally:
                self._report_eval_server_errors(seen)

    watched._hermes_eval_watched = True  # type: ignore[attr-defined]
    return watched
