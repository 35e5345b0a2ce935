"""Upstream-layout import path: ``from environments.agent_loop import AgentResult, HermesAgentLoop``.

Also upstream's module-level helpers: ``_tool_executor`` (the thread pool tools run in; read it as an attribute,
it follows ``resize_tool_pool``), ``resize_tool_pool(n)`` and ``_extract_reasoning_from_message(message)``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_envs.agent import AgentResult, HermesAgentLoop, ToolError, final_response
from hermes_envs.agent.loop import _extract_reasoning

__all__ = [
    "AgentResult",
    "HermesAgentLoop",
    "ToolError",
    "_extract_reasoning_from_message",
    "final_response",
    "resize_tool_pool",
]


def resize_tool_pool(max_workers: int) -> None:
    """Size the pool that runs tool calls off the event loop (what ``tool_pool_size`` sets)."""
    from hermes_envs.tools.sandbox import set_pool_size

    set_pool_size(max_workers)


def _extract_reasoning_from_message(message: Any) -> str | None:
    """Reasoning text of a chat message: ``reasoning_content``, ``reasoning``, or ``reasoning_details`` text."""
    return _extract_reasoning(message)


def __getattr__(name: str) -> Any:
    if name == "_tool_executor":
        # The live pool, so `_tool_executor.shutdown(...)` acts on the pool tools really run in; a new pool is
        # made on the next tool call after a shutdown.
        from hermes_envs.tools.sandbox import default_manager

        pool: ThreadPoolExecutor = default_manager.executor()
        return pool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
