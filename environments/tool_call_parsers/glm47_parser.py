"""Upstream path ``environments.tool_call_parsers.glm47_parser``: ``Glm47ToolCallParser`` is :class:`hermes_envs.parsers.glm.Glm47Parser`."""

from hermes_envs.parsers.glm import Glm47Parser

Glm47ToolCallParser = Glm47Parser

__all__ = ["Glm47ToolCallParser"]
