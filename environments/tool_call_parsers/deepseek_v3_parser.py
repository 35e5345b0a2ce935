"""Upstream path ``environments.tool_call_parsers.deepseek_v3_parser``: ``DeepSeekV3ToolCallParser``, :class:`hermes_envs.parsers.deepseek.DeepSeekV3Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import DeepSeekV3ToolCallParser

__all__ = ["DeepSeekV3ToolCallParser"]
