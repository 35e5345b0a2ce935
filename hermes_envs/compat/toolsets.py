"""Upstream's top-level ``toolsets`` module (served as ``toolsets`` where no other is importable): toolset lookups
over the hermes-envs tool registry, and ``create_custom_toolset``, whose toolset an env can then enable
(``enabled_toolsets=[name]``) like a built-in one."""

from __future__ import annotations

from typing import Any

from hermes_envs.tools import registry as _registry

__all__ = [
    "TOOLSETS",
    "create_custom_toolset",
    "get_all_toolsets",
    "get_toolset",
    "get_toolset_info",
    "get_toolset_names",
    "resolve_multiple_toolsets",
    "resolve_toolset",
    "validate_toolset",
]

#: Toolsets made by :func:`create_custom_toolset` (name -> {description, tools, includes}); the built-in ones are
#: read from the registry.
TOOLSETS: dict[str, dict[str, Any]] = {}


def get_toolset(name: str) -> dict[str, Any] | None:
    """``{description, tools, includes}`` of toolset ``name``, or None."""
    if name in TOOLSETS:
        return TOOLSETS[name]
    tools = _registry.toolsets().get(name)
    return None if tools is None else {"description": "", "tools": list(tools), "includes": []}


def resolve_toolset(name: str, visited: set[str] | None = None) -> list[str]:
    """Every tool of toolset ``name`` and of the toolsets it includes, sorted; ``[]`` for an unknown name
    (``all`` / ``*``: every tool)."""
    if name in ("all", "*"):
        return sorted(_registry.names())
    seen = set() if visited is None else visited
    if name in seen:
        return []
    seen.add(name)
    toolset = get_toolset(name)
    if toolset is None:
        return []
    tools = set(toolset.get("tools") or [])
    for included in toolset.get("includes") or []:
        tools.update(resolve_toolset(included, seen))
    return sorted(tools)


def resolve_multiple_toolsets(toolset_names: list[str]) -> list[str]:
    """The tools of all the named toolsets, sorted."""
    return sorted({tool for name in toolset_names for tool in resolve_toolset(name)})


def get_all_toolsets() -> dict[str, dict[str, Any]]:
    """Every toolset by name."""
    names = set(_registry.toolsets()) | set(TOOLSETS)
    return {name: toolset for name in sorted(names) if (toolset := get_toolset(name)) is not None}


def get_toolset_names() -> list[str]:
    """Every toolset name, sorted."""
    return sorted(set(_registry.toolsets()) | set(TOOLSETS))


def validate_toolset(name: str) -> bool:
    """True for a known toolset name (or ``all`` / ``*``)."""
    return name in ("all", "*") or get_toolset(name) is not None


def create_custom_toolset(
    name: str, description: str, tools: list[str] | None = None, includes: list[str] | None = None
) -> None:
    """Make toolset ``name`` of ``tools`` plus the tools of the ``includes`` toolsets; enabling it offers them."""
    TOOLSETS[name] = {
        "description": description,
        "tools": list(tools or []),
        "includes": list(includes or []),
    }
    _registry.define_toolset(name, resolve_toolset(name))


def get_toolset_info(name: str) -> dict[str, Any] | None:
    """Name, description, direct tools, includes and resolved tools of toolset ``name``; None when unknown."""
    toolset = get_toolset(name)
    if toolset is None:
        return None
    return {
        "name": name,
        "description": toolset["description"],
        "direct_tools": list(toolset["tools"]),
        "includes": list(toolset["includes"]),
        "resolved_tools": resolve_toolset(name),
        "tool_count": len(resolve_toolset(name)),
    }
