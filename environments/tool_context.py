"""Upstream-layout import path: ``from environments.tool_context import ToolContext``.

Also upstream's ``_run_tool_in_thread(tool_name, arguments, task_id)``: call a registered tool for a task from
synchronous code, in a worker thread when an event loop is running in this thread (so it is never blocked by a
tool that itself runs an event loop), directly otherwise. Returns the tool's text result.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hermes_envs.tools import ToolContext
from hermes_envs.tools import registry as _registry

__all__ = ["ToolContext", "_run_tool_in_thread"]

#: Seconds a call made from inside a running event loop may take (upstream's bound).
TOOL_THREAD_TIMEOUT = 300


def _run_tool_in_thread(tool_name: str, arguments: dict[str, Any], task_id: str) -> str:
    """Dispatch ``tool_name`` for ``task_id`` off the calling thread's event loop; the tool's text result."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _registry.dispatch(tool_name, arguments, task_id)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-tool") as pool:
        return pool.submit(_registry.dispatch, tool_name, arguments, task_id).result(
            timeout=TOOL_THREAD_TIMEOUT
        )
