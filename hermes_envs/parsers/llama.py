"""Llama 3.x / 4 JSON tool calls: ``<|python_tag|>{"name": ..., "parameters": {...}}; {...}``.

Only JSON at the top level of the output is a call: the output must start (after whitespace and an optional
``<|python_tag|>``) with a JSON object that has a string ``name`` and ``parameters`` (or ``arguments``), or a JSON
list of such objects. Text followed by ``<|python_tag|>`` and calls is content then calls (the special token is an
unambiguous marker). JSON quoted inside prose without the tag, or a JSON answer that is not call-shaped, is plain
content. Several calls are separated by ``;`` (whitespace alone is accepted too; each call may repeat the tag);
end-of-turn tokens such as ``<|eom_id|>`` after the calls are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._types import JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    MAX_ERRORS,
    JsonMemo,
    MarkerScanner,
    ParserError,
    ParseResult,
    ToolCallParser,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    register_parser,
    skip_ws,
)

__all__ = ["Llama3JsonParser", "Llama4JsonParser"]

PYTHON_TAG = "<|python_tag|>"
# where a call object can start: a brace then a key (a brace then anything else cannot be a call)
_OBJECT_START = re.compile(r'\{\s*"')


def _is_call_shaped(value: JSONValue) -> bool:
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("function"), dict):
        value = value["function"]  # OpenAI's {"type": "function", "function": {...}}
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and ("parameters" in value or "arguments" in value)
    )


# end-of-turn tokens that servers sometimes leave in the text after the calls (not worth a report)
_END_TOKENS = ("<|eom_id|>", "<|eot_id|>", "<|eot|>", "<|end_of_text|>")


def _skip_separators(text: str, pos: int) -> int:
    """Past whitespace, ``;``, ``<|python_tag|>`` and end-of-turn tokens after a call."""
    while True:
        pos = skip_ws(text, pos)
        if text.startswith(";", pos):
            pos += 1
        elif text.startswith(PYTHON_TAG, pos):
            pos += len(PYTHON_TAG)
        elif text.startswith(_END_TOKENS, pos):
            pos = text.index("|>", pos) + 2
        else:
            return pos


def _add(scan: Scan, item: JSONValue) -> bool:
    """Make the call ``item`` describes; report it when it is not a call object."""
    try:
        name, args = call_from_object(item)
    except ValueError as exc:
        if scan.errors.room():
            scan.errors.append(f"tool call #{len(scan.calls) + 1} should be a call object; {exc}.")
        return False
    scan.call(name, args)
    return True


class _Reading:
    """One parse's reading of the JSON objects at the braces a :class:`Scan` yields: where the calls start
    (``first``) and end (``last_end``), and the first object meant as a call but broken (``broken``)."""

    __slots__ = ("broken", "first", "last_end", "plain", "scan")

    def __init__(self, scan: Scan, first: int, last_end: int) -> None:
        self.scan = scan
        self.first = first
        self.last_end = last_end
        self.broken = -1
        self.plain: bool | None = None  # no fences or reasoning blocks (checked once, when first needed)

    def read(self, at: int) -> int:
        """Read the JSON at the brace at ``at``; return where the next brace to read is (-1: none)."""
        scan = self.scan
        self.last_end += (
            scan.skipped
        )  # (copies of the call read last were built: they end one period on each)
        value, stop, reason = scan.memo.scan(scan.text, at)
        if reason is not None:
            return self._broken(at, stop, reason)
        if _is_call_shaped(value):
            if _add(scan, value) and self.first == -1:
                self.first = at
            self.last_end = stop
        return scan.markers.next(
            stop
        )  # a JSON object that is not a call is data: what it holds is not a call either

    def _broken(self, at: int, stop: int, reason: str) -> int:
        """Report the broken JSON at ``at`` when it was meant as a call; return the next brace to read.

        Nested objects of broken JSON are not calls, so the search resumes where the decoder stopped (which keeps
        the scan linear); a looping model's copies of it are counted, not read."""
        scan = self.scan
        text, errors = scan.text, scan.errors
        meant = '"name"' in text[at : at + 200] or text.startswith(PYTHON_TAG, at - len(PYTHON_TAG))
        if meant and self.broken == -1:
            self.broken = at  # a call meant but broken: not content either
        if meant and errors.room():
            errors.append(
                f"tool call #{len(scan.calls) + 1} should be valid JSON; got {excerpt(text, at)} "
                f"({reason} at offset {stop})."
            )
        if reason.startswith(("Unterminated string", "JSON nested too deeply")):
            # No call can follow: an unterminated string has no quote after it (a call needs "name"), and every
            # object inside nesting too deep for the decoder is too deep as well; trying each one would make the
            # scan quadratic. Said, not silent.
            if errors.room():
                errors.append(
                    f"the text after offset {at} should hold no more calls; it was not searched ({reason})."
                )
            return -1
        pos = max(stop, at + 1)
        nxt = scan.markers.next(pos)
        if (
            nxt != -1
            and at >= len(PYTHON_TAG)  # (the copies have text before them where this one has none)
            and (not meant or (self.broken != -1 and len(errors) >= MAX_ERRORS))  # nothing more to record
            and reason.startswith(("Expecting", "Invalid"))  # the decoder read nothing past the error
        ):
            # what this failure depended on: the tag before it, 200 characters (is it meant as a call?), the
            # decoder's error, and the next candidate
            head = _OBJECT_START.match(text, nxt)
            upto = max(stop + 9, at + 200, head.end() if head is not None else nxt + 1)
            nxt = scan.broken_copies(at, nxt, upto, pos, since=at - len(PYTHON_TAG), counted=meant)[1]
            if nxt != -1:
                nxt = scan.markers.next(nxt)
        return nxt

    def result(self) -> ParseResult:
        """The content before the calls (and before a call meant but broken), the calls and the problems."""
        scan = self.scan
        text, errors = scan.text, scan.errors
        if not scan.calls:
            tag = MarkerScanner(text, PYTHON_TAG).next(0)
            if tag != -1 and errors.room():
                errors.append(
                    f"{PYTHON_TAG} should be followed by a JSON tool call; "
                    f"got {excerpt(text, skip_ws(text, tag + len(PYTHON_TAG)))}."
                )
            return ParseResult(text, None, errors.final())
        rest = _skip_separators(text, self.last_end)
        if rest < len(text) and errors.room():
            errors.append(
                f"text after the last tool call should be empty; got {excerpt(text, rest)} (ignored)."
            )
        content = text[: self.first if self.broken == -1 else min(self.first, self.broken)].rstrip()
        if content.endswith(PYTHON_TAG):
            content = content[: -len(PYTHON_TAG)].rstrip()
        return ParseResult(content or None, scan.calls, errors.final())


@register_parser("llama3_json")
class Llama3JsonParser(ToolCallParser):
    """Llama 3.1/3.2/3.3 JSON tool calls."""

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        # a call is an object with a "name" key, written as is or with \u escapes (no other escape gives letters);
        # a lone backslash is one memchr where "\u" would be a slower two-character search
        return ('"name"', "\\")

    @classmethod
    def _report_markers(cls) -> tuple[str, ...]:
        return ("{", PYTHON_TAG)  # a broken object, or the tag alone, is a problem to report

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        memo = JsonMemo()
        pos = skip_ws(text, 0)
        if text.startswith(PYTHON_TAG, pos):
            pos = skip_ws(text, pos + len(PYTHON_TAG))
        listed: list[JSONValue] = []
        first = -1
        if (
            pos < len(text) and text[pos] == "["
        ):  # a JSON list of calls at the very start (every item call-shaped)
            value, stop, reason = memo.scan(text, pos)
            if reason is None and isinstance(value, list) and value and all(map(_is_call_shaped, value)):
                listed, first, pos = value, pos, stop
        # braces in code fences, inline code and closed <think> are not calls
        scan = Scan(text, "{", pattern=_OBJECT_START, start=pos, memo=memo)
        reading = _Reading(scan, first, pos if listed else -1)
        for item in listed:
            _add(scan, item)
        for at in scan.segments():
            scan.resume(reading.read(at))
        return reading.result()

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        if content:
            raise ParserError(
                f"{self.name} output should be tool calls only (the format has no room for content); "
                f"got content {content[:40]!r}."
            )
        return "; ".join(dumps({"name": n, "parameters": a}) for _, n, a in map(call_parts, tool_calls))


@register_parser("llama4_json")
class Llama4JsonParser(Llama3JsonParser):
    """Llama 4 JSON tool calls (same wire format as Llama 3)."""
