"""Upstream's top-level ``model_tools`` module (served as ``model_tools`` where no other is importable): the tool
schemas of toolsets and one-call dispatch, over the hermes-envs tool registry."""

from __future__ import annotations

import json
from typing import Any

from hermes_envs.tools import registry as _registry

__all__ = ["get_all_tool_names", "get_tool_definitions", "handle_function_call"]


def get_tool_definitions(
    enabled_toolsets: list[str] | None = None,
    disabled_toolsets: list[str] | None = None,
    quiet_mode: bool = False,
) -> list[dict[str, Any]]:
    """The OpenAI ``tools`` entries of the enabled toolsets (None: all) minus the disabled ones."""
    schemas, _names = _registry.resolve(enabled_toolsets, disabled_toolsets)
    return schemas


def get_all_tool_names() -> list[str]:
    """Every registered tool name, sorted."""
    return sorted(_registry.names())


def handle_function_call(
    function_name: str, function_args: dict[str, Any], task_id: str | None = None, **_: Any
) -> str:
    """Run tool ``function_name`` for ``task_id``; its result as a string (a failure: ``{"error": ...}``)."""
    if function_name not in _registry:
        return json.dumps({"error": f"Unknown tool: {function_name}"})
    try:
        return _registry.dispatch(function_name, dict(function_args or {}), task_id or "default")
    except Exception as exc:  # upstream reports a tool failure as the call's result
        return json.dumps({"error": f"Tool execution failed: {type(exc).__name__}: {exc}"})
