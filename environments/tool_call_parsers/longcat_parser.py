"""Upstream path ``environments.tool_call_parsers.longcat_parser``: ``LongcatToolCallParser`` is :class:`hermes_envs.parsers.json_tagged.LongcatParser`."""

from hermes_envs.parsers.json_tagged import LongcatParser

LongcatToolCallParser = LongcatParser

__all__ = ["LongcatToolCallParser"]
