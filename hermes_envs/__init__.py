"""hermes-envs: write, test and gate RL environments for tool-calling LLM agents trained with Atropos.

The facade re-exports the public API. Everything but the errors is loaded on first access: ``HermesAgentBaseEnv``
imports atroposlib (about 4 s: transformers, wandb), and the pytest plugin imports this package in every pytest run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_envs.errors import (
    ConfigError,
    EnvLoadError,
    HermesEnvsError,
    PathEscapeError,
    SandboxError,
    ScriptError,
    ToolRegistryError,
)

if TYPE_CHECKING:
    from hermes_envs.agent import (
        AgentResult,
        HermesAgentLoop,
        ToolError,
        final_response,
        tool_calls,
        tool_results,
        tools_used,
    )
    from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig
    from hermes_envs.parsers import ToolCallParser, get_parser, list_parsers, register_parser
    from hermes_envs.tools import EnvRuntime, ToolContext, ToolRegistry, tool
    from hermes_envs.tools.registry import registry

__version__ = "0.1.0"

_LAZY = {
    # hermes_envs.agent imports asyncio and ssl (~0.1 s): not paid by every pytest run that loads the plugin.
    **dict.fromkeys(
        [
            "AgentResult",
            "HermesAgentLoop",
            "ToolError",
            "final_response",
            "tool_calls",
            "tool_results",
            "tools_used",
        ],
        "hermes_envs.agent",
    ),
    "EnvRuntime": "hermes_envs.tools",
    "HermesAgentBaseEnv": "hermes_envs.env",
    "HermesAgentEnvConfig": "hermes_envs.env",
    "ToolContext": "hermes_envs.tools",
    "ToolRegistry": "hermes_envs.tools",
    "registry": "hermes_envs.tools",
    "tool": "hermes_envs.tools",
    "ToolCallParser": "hermes_envs.parsers",
    "get_parser": "hermes_envs.parsers",
    "list_parsers": "hermes_envs.parsers",
    "register_parser": "hermes_envs.parsers",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_envs' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AgentResult",
    "ConfigError",
    "EnvLoadError",
    "EnvRuntime",
    "HermesAgentBaseEnv",
    "HermesAgentEnvConfig",
    "HermesAgentLoop",
    "HermesEnvsError",
    "PathEscapeError",
    "SandboxError",
    "ScriptError",
    "ToolCallParser",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolRegistryError",
    "__version__",
    "final_response",
    "get_parser",
    "list_parsers",
    "register_parser",
    "registry",
    "tool",
    "tool_calls",
    "tool_results",
    "tools_used",
]
