"""Llama 3.x / 4 JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": {...}}; {...}``.

Only JSON at the top level of the output is a call: the output must start (after whitespace and an optional
``<|python_tag|>``) with a JSON object that has a string ``name`` and ``parameters`` (or ``arguments``), or a JSON
list of such objects. Text followed by ``<|python_tag|>`` and calls is content then calls (the special token is an
unambiguous marker). JSON quoted inside prose without the tag, or a JSON answer that is not call-shaped, is plain
content. Several calls are separated by ``;`` (whitespace alone is accepted too; each call may repeat the tag);
end-of-turn tokens such as ``<|eom_id|>`` after the calls are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers.base import (
    MarkerScanner,
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
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("function"), dict):
        value = value["function"]  # OpenAI's {"type": "function", "function": {...}}
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and ("parameters" in value or "arguments" in value)
    )


# end-of-turn tokens that servers sometimes leave in the text after the calls (not worth a report)
_END_TOKENS = ("<|eom_id|>", "<|eot_id|>", "<|eot|>", "<|end_of_text|>")


@register_parser("llama3_json")
class Llama3JsonParser(ToolCallParser):
    """Llama 3.1/3.2/3.3 JSON tool calls."""

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
        pos = skip_ws(text, 0)
        tagged = text.startswith(PYTHON_TAG, pos)
        if not tagged and pos < len(text) and text[pos] in "{[":
            # JSON first: calls at the top of the output, or a bracketed note / JSON thought before a tagged call
            first = self._calls_from(text, pos, False, 0)
            if first.tool_calls:
                return first
            at = MarkerScanner(text, PYTHON_TAG).next(pos)
            return first if at == -1 else self._calls_from(text, at, True, at)
        content_end = 0
        if not tagged:
            # text first, then <|python_tag|>: the special token marks the calls (the text is content)
            at = MarkerScanner(text, PYTHON_TAG).next(pos)
            if at == -1:
                return ParseResult(text, None)
            tagged, pos, content_end = True, at, at
        return self._calls_from(text, pos, tagged, content_end)

    def _calls_from(self, text: str, pos: int, tagged: bool, content_end: int) -> ParseResult:
        """The calls from ``pos`` (at ``<|python_tag|>`` when ``tagged``); the text before ``content_end`` is
        the content."""
        if tagged:
            pos = skip_ws(text, pos + len(PYTHON_TAG))
        if pos >= len(text) or text[pos] not in "{[":
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
            # a JSON list of calls is accepted as well (every item must be call-shaped)
            items = value if isinstance(value, list) and value else [value]
            if not all(_is_call_shaped(item) for item in items):
                if index > 1 or tagged:
                    errors.append(
                        f"tool call #{index} should be an object with 'name' and 'parameters'; got {excerpt(text, pos)}."
                    )
                break
            for item in items:
                try:
                    name, args = call_from_object(item)
                    calls.append(make_tool_call(name, args))
                except ValueError as exc:
                    errors.append(f"tool call #{index} should be a call object; {exc}.")
            pos = skip_ws(text, end)
            if pos < len(text) and text[pos] == ";":
                pos = skip_ws(text, pos + 1)
            if text.startswith(PYTHON_TAG, pos):  # each call may carry its own tag
                pos = skip_ws(text, pos + len(PYTHON_TAG))
            while text.startswith(_END_TOKENS, pos):
                pos = skip_ws(text, text.index("|>", pos) + 2)
            if pos >= len(text):
                break
            if text[pos] not in "{[":
                errors.append(
                    f"text after the last tool call should be empty; got {excerpt(text, pos)} (ignored)."
                )
                break
        if not calls:
            return ParseResult(text, None, errors)
        return ParseResult(text[:content_end].rstrip() or None, calls, errors)

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
