"""Upstream path ``environments.tool_call_parsers.deepseek_v3_parser``: ``DeepSeekV3ToolCallParser`` is :class:`hermes_envs.parsers.deepseek.DeepSeekV3Parser`."""

from hermes_envs.parsers.deepseek import DeepSeekV3Parser

DeepSeekV3ToolCallParser = DeepSeekV3Parser

__all__ = ["DeepSeekV3ToolCallParser"]
