"""Upstream path ``environments.tool_call_parsers.kimi_k2_parser``: ``KimiK2ToolCallParser``, :class:`hermes_envs.parsers.kimi.KimiK2Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import KimiK2ToolCallParser

__all__ = ["KimiK2ToolCallParser"]
