"""Upstream path ``environments.tool_call_parsers.glm47_parser``: ``Glm47ToolCallParser``, :class:`hermes_envs.parsers.
glm.Glm47Parser` under upstream's class name, and (as upstream's) a ``Glm45ToolCallParser``."""

from environments.tool_call_parsers.glm45_parser import Glm45ToolCallParser
from hermes_envs.parsers.glm import Glm47Parser

__all__ = ["Glm47ToolCallParser"]


class Glm47ToolCallParser(Glm47Parser, Glm45ToolCallParser):
    """Glm47Parser under upstream's class name; an instance of Glm45ToolCallParser too, as upstream's is."""
