"""Upstream path ``environments.tool_call_parsers.glm47_parser``: ``Glm47ToolCallParser`` is :class:`hermes_envs.parsers.xml_params.Glm47Parser`."""

from hermes_envs.parsers.xml_params import Glm47Parser

Glm47ToolCallParser = Glm47Parser

__all__ = ["Glm47ToolCallParser"]
