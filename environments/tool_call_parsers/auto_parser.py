"""Upstream path ``environments.tool_call_parsers.auto_parser``: ``AutoToolCallParser``, :class:`hermes_envs.parsers.auto.AutoParser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import AutoToolCallParser

__all__ = ["AutoToolCallParser"]
