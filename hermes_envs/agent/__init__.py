"""The agent loop, what it returns, and the tool-result budget it applies."""

from hermes_envs.agent.budget import BudgetConfig
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
    "BudgetConfig",
    "ChatServer",
    "HermesAgentLoop",
    "TerminationReason",
    "ToolError",
    "final_response",
    "tool_calls",
    "tool_results",
    "tools_used",
]
