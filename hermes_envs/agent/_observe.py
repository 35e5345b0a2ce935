"""Who is watching the loop's results: a ``ContextVar`` list that every finished :class:`AgentResult` joins.

The env base watches ``evaluate`` calls this way (``HermesAgentBaseEnv.watching_evaluate``, entered by its run
drivers and the kit), so an eval rollout that ended in a model-server error is
reported even when the author's ``evaluate`` built the loop by hand and scored the rollout like any other.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from hermes_envs.agent.result import AgentResult

__all__ = ["report_result", "watch_results", "watched_results"]

_WATCHERS: contextvars.ContextVar[list[AgentResult] | None] = contextvars.ContextVar(
    "hermes_agent_result_watchers", default=None
)


@contextlib.contextmanager
def watch_results() -> Iterator[list[AgentResult]]:
    """Within the block, collect every result the agent loop returns (in this task and tasks it starts)."""
    seen: list[AgentResult] = []
    token = _WATCHERS.set(seen)
    try:
        yield seen
    finally:
        _WATCHERS.reset(token)


def watched_results() -> list[AgentResult] | None:
    """The list of the innermost :func:`watch_results` block, or None outside any."""
    return _WATCHERS.get()


def report_result(result: AgentResult) -> AgentResult:
    """Called by the loop with each result it returns; hands ``result`` back unchanged."""
    seen = _WATCHERS.get()
    if seen is not None:
        seen.append(result)
    return result
