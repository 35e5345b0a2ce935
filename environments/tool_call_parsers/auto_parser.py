"""Upstream path ``environments.tool_call_parsers.auto_parser``: ``AutoToolCallParser`` is :class:`hermes_envs.parsers.auto.AutoParser`."""

from hermes_envs.parsers.auto import AutoParser

AutoToolCallParser = AutoParser

__all__ = ["AutoToolCallParser"]
