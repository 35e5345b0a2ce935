"""Upstream path ``environments.tool_call_parsers.deepseek_v3_1_parser``: ``DeepSeekV31ToolCallParser``, :class:`hermes_envs.parsers.deepseek.DeepSeekV31Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import DeepSeekV31ToolCallParser

__all__ = ["DeepSeekV31ToolCallParser"]
