"""Upstream-layout import path: ``from environments.agent_loop import AgentResult, HermesAgentLoop``."""

from hermes_envs.agent import AgentResult, HermesAgentLoop, ToolError, final_response

__all__ = ["AgentResult", "HermesAgentLoop", "ToolError", "final_response"]
