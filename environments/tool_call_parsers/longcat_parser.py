"""Upstream path ``environments.tool_call_parsers.longcat_parser``: ``LongcatToolCallParser``, :class:`hermes_envs.parsers.json_tagged.LongcatParser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import LongcatToolCallParser

__all__ = ["LongcatToolCallParser"]
