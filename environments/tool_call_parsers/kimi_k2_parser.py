"""Upstream path ``environments.tool_call_parsers.kimi_k2_parser``: ``KimiK2ToolCallParser`` is :class:`hermes_envs.parsers.kimi.KimiK2Parser`."""

from hermes_envs.parsers.kimi import KimiK2Parser

KimiK2ToolCallParser = KimiK2Parser

__all__ = ["KimiK2ToolCallParser"]
