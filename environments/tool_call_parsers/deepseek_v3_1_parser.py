"""Upstream path ``environments.tool_call_parsers.deepseek_v3_1_parser``: ``DeepSeekV31ToolCallParser`` is :class:`hermes_envs.parsers.deepseek.DeepSeekV31Parser`."""

from hermes_envs.parsers.deepseek import DeepSeekV31Parser

DeepSeekV31ToolCallParser = DeepSeekV31Parser

__all__ = ["DeepSeekV31ToolCallParser"]
