"""Llama 3.x / 4 JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": {...}}; {...}``.

Only JSON at the top level of the output is a call: the output must start (after whitespace and an optional
``<|python_tag|>``) with a JSON object that has a string ``name`` and ``parameters`` (or ``arguments``). JSON
quoted inside prose, or a JSON answer that is not call-shaped, is plain content. Several calls are separated by
``;`` (whitespace alone is accepted too).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers.base import (
    ParserError,
    ParseResult,
    ToolCallParser,
    call_from_object,
    call_parts,
    decode_json_at,
    dumps,
    excerpt,
    make_tool_call,
    register_parser,
    skip_ws,
)

__all__ = ["Llama3JsonParser", "Llama4JsonParser"]

PYTHON_TAG = "<|python_tag|>"


def _is_call_shaped(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and ("parameters" in value or "arguments" in value)
    )


@register_parser("llama3_json")
class Llama3JsonParser(ToolCallParser):
    """Llama 3.1/3.2/3.3 JSON tool calls."""

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
        pos = skip_ws(text, 0)
        tagged = text.startswith(PYTHON_TAG, pos)
        if tagged:
            pos = skip_ws(text, pos + len(PYTHON_TAG))
        if pos >= len(text) or text[pos] != "{":
            errors = (
                [f"{PYTHON_TAG} should be followed by a JSON tool call; got {excerpt(text, pos)}."]
                if tagged
                else []
            )
            return ParseResult(text, None, errors)
        calls: list[ChatCompletionMessageToolCall] = []
        errors: list[str] = []
        index = 0
        while True:
            index += 1
            try:
                value, end = decode_json_at(text, pos)
            except ValueError as exc:
                if index > 1 or tagged or '"name"' in text[pos : pos + 200]:
                    errors.append(
                        f"tool call #{index} should be valid JSON; got {excerpt(text, pos)} ({exc})."
                    )
                break
            if not _is_call_shaped(value):
                if index > 1 or tagged:
                    errors.append(
                        f"tool call #{index} should be an object with 'name' and 'parameters'; got {excerpt(text, pos)}."
                    )
                break
            try:
                name, args = call_from_object(value)
                calls.append(make_tool_call(name, args))
            except ValueError as exc:
                errors.append(f"tool call #{index} should be a call object; {exc}.")
            pos = skip_ws(text, end)
            if pos < len(text) and text[pos] == ";":
                pos = skip_ws(text, pos + 1)
            if pos >= len(text):
                break
            if text[pos] != "{":
                errors.append(
                    f"text after the last tool call should be empty; got {excerpt(text, pos)} (ignored)."
                )
                break
        if not calls:
            return ParseResult(text, None, errors)
        return ParseResult(None, calls, errors)

    def render(self, content: str | None, tool_calls: Iterable[Any]) -> str:
        if content:
            raise ParserError(
                f"{self.name} output should be tool calls only (the format has no room for content); "
                f"got content {content[:40]!r}."
            )
        return "; ".join(dumps({"name": n, "parameters": a}) for _, n, a in map(call_parts, tool_calls))


@register_parser("llama4_json")
class Llama4JsonParser(Llama3JsonParser):
    """Llama 4 JSON tool calls (same wire format as Llama 3)."""
