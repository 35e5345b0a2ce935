"""Upstream path ``environments.tool_call_parsers.deepseek_v4_parser``: ``DeepSeekV4ToolCallParser``, :class:`hermes_envs.parsers.deepseek_v4.DeepSeekV4Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import DeepSeekV4ToolCallParser

__all__ = ["DeepSeekV4ToolCallParser"]
