"""The agent loop and what it returns."""

from hermes_envs.agent.loop import ChatServer, HermesAgentLoop
from hermes_envs.agent.result import (
    AgentResult,
    TerminationReason,
    ToolError,
    final_response,
    tool_calls,
    tool_results,
    tools_used,
)

__all__ = [
    "AgentResult",
    "ChatServer",
    "HermesAgentLoop",
    "TerminationReason",
    "ToolError",
    "final_response",
    "tool_calls",
    "tool_results",
    "tools_used",
]
