"""Upstream's ``tools.registry`` (served as ``tools.registry``): its ``registry`` object over the hermes-envs tool
registry, so a tool an env registers upstream's way is offered, dispatched and budgeted like any other.

Upstream's calling convention: ``registry.register(name=, toolset=, schema={name, description, parameters},
handler=fn, ..., max_result_size_chars=None)`` where ``fn(args: dict, **kwargs)`` gets the arguments as ONE dict
(and ``task_id=`` as a keyword); ``registry.dispatch(name, args, task_id=...)`` returns the result as a string.
Only what env files use is here: register / deregister, dispatch, the name and definition lookups, and
``get_max_result_size`` (what ``tools.budget_config`` reads).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_envs.errors import ToolRegistryError
from hermes_envs.tools import registry as _ours
from hermes_envs.tools.registry import Tool

__all__ = ["ToolEntry", "ToolRegistry", "registry"]


@dataclass(eq=False)
class ToolEntry:
    """What upstream keeps per tool (the fields an env reads)."""

    name: str
    toolset: str
    schema: dict
    handler: Callable[..., Any]
    check_fn: Callable[[], bool] | None = None
    requires_env: list[str] | None = None
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    max_result_size_chars: int | float | None = None


class ToolRegistry:
    """Upstream's registry API; the tools themselves live in :data:`hermes_envs.tools.registry`."""

    def __init__(self) -> None:
        self._entries: dict[str, ToolEntry] = {}
        self._lock = threading.RLock()

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict,
        handler: Callable[..., Any],
        check_fn: Callable[[], bool] | None = None,
        requires_env: list[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: int | float | None = None,
        **_ignored: Any,
    ) -> None:
        """Register ``handler`` (called as ``handler(args_dict, task_id=...)``) as tool ``name`` of ``toolset``."""
        if not isinstance(schema, dict):
            raise ToolRegistryError(  # a ValueError too, as upstream's
                f"tool {name!r} should be registered with a schema dict; got {type(schema).__name__}. "
                "Fix: pass schema={'name': ..., 'description': ..., 'parameters': {...}}."
            )
        parameters = schema.get("parameters") or {"type": "object", "properties": {}}

        def call(task_id: str | None = None, **arguments: Any) -> Any:
            return handler(arguments, task_id=task_id)

        call.__name__ = getattr(handler, "__name__", name)
        call.__qualname__ = getattr(handler, "__qualname__", name)
        call.__module__ = getattr(handler, "__module__", __name__)
        entry = ToolEntry(
            name, toolset, schema, handler, check_fn, requires_env, is_async,
            description or str(schema.get("description", "")), emoji, max_result_size_chars,
        )  # fmt: skip
        with self._lock:
            if name in _ours:
                _ours.unregister(name)
            _ours.register(Tool(name, toolset, entry.description, parameters, call, wants_task_id=True))
            self._entries[name] = entry

    def deregister(self, name: str) -> None:
        """Remove tool ``name`` (no error when it is not registered)."""
        with self._lock:
            self._entries.pop(name, None)
            if name in _ours:
                _ours.unregister(name)

    def get_entry(self, name: str) -> ToolEntry | None:
        """The entry of a tool registered here, else one describing a hermes-envs tool, else None."""
        if name in self._entries:
            return self._entries[name]
        if name not in _ours:
            return None
        tool = _ours.get(name)
        return ToolEntry(
            name, tool.toolset, tool.schema()["function"], tool.handler, description=tool.description
        )

    def get_max_result_size(self, name: str, default: int | float | None = None) -> int | float | None:
        """The tool's ``max_result_size_chars``, else ``default``."""
        entry = self._entries.get(name)
        if entry is not None and entry.max_result_size_chars is not None:
            return entry.max_result_size_chars
        return default

    def get_all_tool_names(self) -> list[str]:
        """Every registered tool name, sorted."""
        return sorted(_ours.names())

    def get_toolset_for_tool(self, name: str) -> str | None:
        """The toolset of ``name``, or None for an unknown tool."""
        return _ours.get(name).toolset if name in _ours else None

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        """The tools of ``toolset``, sorted."""
        return sorted(_ours.toolsets().get(toolset, []))

    def get_registered_toolset_names(self) -> list[str]:
        """Every toolset name, sorted."""
        return sorted(_ours.toolsets())

    def get_definitions(self, tool_names: set[str] | list[str], quiet: bool = False) -> list[dict]:
        """OpenAI ``tools`` entries of the named tools that exist (upstream's ``get_definitions``)."""
        return [_ours.get(n).schema() for n in _ours.names() if n in set(tool_names)]

    def dispatch(self, name: str, args: dict, task_id: str | None = None, **_kwargs: Any) -> str:
        """Run tool ``name`` with ``args``; its result as a string. A failure is a JSON ``{"error": ...}`` string,
        as upstream's dispatch returns it."""
        if name not in _ours:
            return json.dumps({"error": f"Unknown tool: {name}"})
        try:
            return _ours.dispatch(name, dict(args or {}), task_id or "default")
        except Exception as exc:  # upstream's dispatch reports a tool failure as its result
            return json.dumps({"error": f"Tool execution failed: {type(exc).__name__}: {exc}"})


#: The process-wide registry, as upstream's module attribute.
registry = ToolRegistry()
