"""Upstream path ``environments.tool_call_parsers.glm47_parser``: ``Glm47ToolCallParser``, :class:`hermes_envs.parsers.glm.Glm47Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.parsers.glm import Glm47Parser

__all__ = ["Glm47ToolCallParser"]


class Glm47ToolCallParser(Glm47Parser):
    """Glm47Parser under upstream's class name."""
