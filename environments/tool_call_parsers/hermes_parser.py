"""Upstream path ``environments.tool_call_parsers.hermes_parser``: ``HermesToolCallParser``, :class:`hermes_envs.parsers.json_tagged.HermesParser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import HermesToolCallParser

__all__ = ["HermesToolCallParser"]
