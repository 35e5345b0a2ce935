"""Upstream path ``environments.tool_call_parsers.deepseek_v4_parser``: ``DeepSeekV4ToolCallParser`` is :class:`hermes_envs.parsers.deepseek_v4.DeepSeekV4Parser`."""

from hermes_envs.parsers.deepseek_v4 import DeepSeekV4Parser

DeepSeekV4ToolCallParser = DeepSeekV4Parser

__all__ = ["DeepSeekV4ToolCallParser"]
