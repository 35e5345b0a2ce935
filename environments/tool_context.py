"""Upstream-layout import path: ``from environments.tool_context import ToolContext``."""

from hermes_envs.tools import ToolContext

__all__ = ["ToolContext"]
