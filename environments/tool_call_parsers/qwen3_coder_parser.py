"""Upstream path ``environments.tool_call_parsers.qwen3_coder_parser``: ``Qwen3CoderToolCallParser``, as upstream's.

A parameter value that no tool schema types is decoded the way upstream's parser does (``42`` -> 42, ``null`` ->
None, ``true``, JSON objects and lists, Python literals such as ``True``; anything else is the whitespace-stripped
text). :class:`hermes_envs.parsers.qwen3_coder.Qwen3CoderParser` follows vLLM, which keeps such a value as the text.
With the request's tool schemas (``parse(text, tools)``), the schema types the value in both.
"""

from hermes_envs.compat.upstream_parsers import Qwen3CoderToolCallParser, upstream_value

__all__ = ["Qwen3CoderToolCallParser", "upstream_value"]
