"""Upstream path ``environments.tool_call_parsers.qwen3_coder_parser``: ``Qwen3CoderToolCallParser`` is :class:`hermes_envs.parsers.qwen3_coder.Qwen3CoderParser`."""

from hermes_envs.parsers.qwen3_coder import Qwen3CoderParser

Qwen3CoderToolCallParser = Qwen3CoderParser

__all__ = ["Qwen3CoderToolCallParser"]
