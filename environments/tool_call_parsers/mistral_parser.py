"""Upstream path ``environments.tool_call_parsers.mistral_parser``: ``MistralToolCallParser``, as upstream's.

Where no call can be read, upstream returns the text unchanged as the content; :class:`hermes_envs.parsers.mistral.
MistralParser` follows vLLM, which drops the ``[TOOL_CALLS]`` token from it. This class keeps the text as is.
"""

from __future__ import annotations

from typing import Any

from hermes_envs.parsers import ParseResult
from hermes_envs.parsers.mistral import MistralParser

__all__ = ["MistralToolCallParser"]


class MistralToolCallParser(MistralParser):
    """Mistral's ``[TOOL_CALLS]`` format; text with no readable call comes back unchanged (upstream's rule)."""

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
        result = super()._parse(text, tools)
        if result.tool_calls:
            return result
        return ParseResult(text, None, result.errors)
