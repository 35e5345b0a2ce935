"""Upstream path ``environments.tool_call_parsers.glm45_parser``: ``Glm45ToolCallParser``, :class:`hermes_envs.parsers.glm.Glm45Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import Glm45ToolCallParser

__all__ = ["Glm45ToolCallParser"]
