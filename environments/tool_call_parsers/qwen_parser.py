"""Upstream path ``environments.tool_call_parsers.qwen_parser``: ``QwenToolCallParser`` is :class:`hermes_envs.parsers.json_tagged.HermesParser`."""

from hermes_envs.parsers.json_tagged import HermesParser

QwenToolCallParser = HermesParser

__all__ = ["QwenToolCallParser"]
