"""Upstream path ``environments.tool_call_parsers.glm45_parser``: ``Glm45ToolCallParser`` is :class:`hermes_envs.parsers.glm.Glm45Parser`."""

from hermes_envs.parsers.glm import Glm45Parser

Glm45ToolCallParser = Glm45Parser

__all__ = ["Glm45ToolCallParser"]
