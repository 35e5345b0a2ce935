"""Upstream path ``environments.tool_call_parsers.deepseek_v4_parser``: ``DeepSeekV4ToolCallParser``, :class:`hermes_envs.parsers.deepseek_v4.DeepSeekV4Parser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.parsers.deepseek_v4 import DeepSeekV4Parser

__all__ = ["DeepSeekV4ToolCallParser"]


class DeepSeekV4ToolCallParser(DeepSeekV4Parser):
    """DeepSeekV4Parser under upstream's class name."""
