"""Upstream path ``environments.tool_call_parsers.qwen3_coder_parser``: ``Qwen3CoderToolCallParser``, as upstream's.

A parameter value that no tool schema types is decoded the way upstream's parser does (``42`` -> 42, ``null`` ->
None, ``true``, JSON objects and lists, Python literals such as ``True``; anything else is the whitespace-stripped
text). :class:`hermes_envs.parsers.qwen3_coder.Qwen3CoderParser` follows vLLM, which keeps such a value as the text.
With the request's tool schemas (``parse(text, tools)``), the schema types the value in both.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from hermes_envs.parsers.qwen3_coder import Qwen3CoderParser

__all__ = ["Qwen3CoderToolCallParser"]

#: Longer values are not given to ``ast.literal_eval`` (deep nesting can exhaust the C stack).
_LITERAL_LIMIT = 100_000


def upstream_value(raw: str) -> Any:
    """``raw`` decoded as upstream hermes-agent's qwen3_coder parser does when it has no schema."""
    stripped = raw.strip()
    if stripped.lower() == "null":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    if len(stripped) <= _LITERAL_LIMIT:
        try:
            value = ast.literal_eval(stripped)
            json.dumps(value)  # a set, bytes or complex number has no JSON form: keep the text
            return value
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return stripped


class Qwen3CoderToolCallParser(Qwen3CoderParser):
    """Qwen3-Coder XML calls; untyped values decoded as upstream's parser decodes them."""

    def _untyped_value(self, raw: str) -> Any:
        return upstream_value(raw)
