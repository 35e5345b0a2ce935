"""Tools for agents: the registry and its built-in toolsets, the per-task sandbox, and ToolContext for rewards.

Importing this package registers the built-in ``terminal`` and ``file`` toolsets, and upstream's other tool
families (:mod:`hermes_envs.tools.toolsets`), on the default :data:`registry`.
"""

from __future__ import annotations

from . import builtin as _builtin  # noqa: F401  (registers the built-in toolsets)
from . import toolsets as _toolsets  # noqa: F401  (registers upstream's other tool families)
from ._runtime import EnvRuntime
from .backends import CommandResult, SandboxBackend, available_backends, register_backend
from .context import ToolContext
from .registry import Tool, ToolRegistry, registry, schema_from_function, tool
from .sandbox import (
    Sandbox,
    SandboxConfig,
    SandboxManager,
    active_sandboxes,
    cleanup_all_sandboxes,
    cleanup_sandbox,
    configure_sandboxes,
    default_manager,
    get_sandbox,
    sandbox_config,
)

__all__ = [
    "CommandResult",
    "EnvRuntime",
    "Sandbox",
    "SandboxBackend",
    "SandboxConfig",
    "SandboxManager",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "active_sandboxes",
    "available_backends",
    "cleanup_all_sandboxes",
    "cleanup_sandbox",
    "configure_sandboxes",
    "default_manager",
    "get_sandbox",
    "register_backend",
    "registry",
    "sandbox_config",
    "schema_from_function",
    "tool",
]
