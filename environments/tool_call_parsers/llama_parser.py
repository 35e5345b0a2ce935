"""Upstream path ``environments.tool_call_parsers.llama_parser``: ``LlamaToolCallParser``, :class:`hermes_envs.parsers.llama.Llama3JsonParser` under upstream's
class name (what ``get_parser`` of this package returns; the parsing is the same)."""

from hermes_envs.compat.upstream_parsers import LlamaToolCallParser

__all__ = ["LlamaToolCallParser"]
