"""Upstream path ``environments.tool_call_parsers.glm47_parser``: ``Glm47ToolCallParser``, :class:`hermes_envs.parsers.
glm.Glm47Parser` under upstream's class name, and (as upstream's) a ``Glm45ToolCallParser``."""

from hermes_envs.compat.upstream_parsers import Glm47ToolCallParser

__all__ = ["Glm47ToolCallParser"]
