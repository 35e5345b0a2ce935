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

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._json import FAR
from hermes_envs.parsers._scan import (
    CONTEXT_MARKERS,
    READ_MARGIN,
    confirmed_copies,
    count_repeats,
    local_copies,
)
from hermes_envs.parsers._types import JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    MAX_ERRORS,
    JsonMemo,
    MarkerScanner,
    ParserError,
    ParseResult,
    Problems,
    ToolCallParser,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    make_tool_call,
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
        n = len(text)
        calls: list[ChatCompletionMessageToolCall] = []
        errors = Problems()
        memo = JsonMemo()
        first = last_end = broken = -1
        plain: bool | None = None  # no fences or reasoning blocks (checked once, when first needed)
        mark = -1  # the last call read (see reading_copies): where its brace was (-1: none), and what it made
        made = ("", "")
        pos = skip_ws(text, 0)
        if text.startswith(PYTHON_TAG, pos):
            pos = skip_ws(text, pos + len(PYTHON_TAG))
        if pos < n and text[pos] == "[":  # a JSON list of calls at the very start (every item call-shaped)
            value, stop, reason = memo.scan(text, pos)
            if reason is None and isinstance(value, list) and value and all(map(_is_call_shaped, value)):
                for item in value:
                    self._add(item, len(calls) + 1, calls, errors)
                first, last_end, pos = pos, stop, stop
        # braces in code fences, inline code and closed <think> are not calls
        braces = MarkerScanner(text, "{", _OBJECT_START)
        while True:
            at = braces.next(pos)
            if at == -1:
                break
            if mark != -1 and memo.reach < FAR:
                period = at - mark
                upto = (at if at > memo.reach else memo.reach) + READ_MARGIN
                # (the cheap check of reading_copies first: ordinary calls one after another differ there)
                if upto + period <= n and text[upto - 1] == text[upto - 1 + period]:
                    head = _OBJECT_START.match(text, at)  # (what the search for this brace read)
                    reach = memo.reach if head is None or head.end() < memo.reach else head.end()
                    copies = local_copies(text, mark, at, reach, braces)
                    if copies:
                        # copies of the call just read, one after another: each is the same call, built, not read
                        name, args = made
                        for _ in range(copies):
                            calls.append(make_tool_call(name, args))
                        at += copies * period
                        last_end += copies * period
            mark = -1
            memo.reach = 0
            value, stop, reason = memo.scan(text, at)
            if reason is not None:
                # only worth a report when it was meant as a call; nested objects of broken JSON are not calls,
                # so scanning resumes where the decoder stopped (which keeps the scan linear)
                meant = '"name"' in text[at : at + 200] or text.startswith(PYTHON_TAG, at - len(PYTHON_TAG))
                if meant and broken == -1:
                    broken = at  # a call meant but broken: not content either
                if meant and errors.room():
                    errors.append(
                        f"tool call #{len(calls) + 1} should be valid JSON; got {excerpt(text, at)} "
                        f"({reason} at offset {stop})."
                    )
                if reason.startswith(("Unterminated string", "JSON nested too deeply")):
                    # No call can follow: an unterminated string has no quote after it (a call needs "name"), and
                    # every object inside nesting too deep for the decoder is too deep as well; trying each one
                    # would make the scan quadratic. Said, not silent.
                    if errors.room():
                        errors.append(
                            f"the text after offset {at} should hold no more calls; it was not searched "
                            f"({reason})."
                        )
                    break
                pos = max(stop, at + 1)
                if (
                    (not meant or (broken != -1 and len(errors) >= MAX_ERRORS))  # nothing more to record
                    and reason.startswith(("Expecting", "Invalid"))  # the decoder read nothing past the error
                ):
                    if plain is None:
                        plain = not any(m in text for m in CONTEXT_MARKERS)
                    pos = self._skip_repeats(text, at, stop, pos, braces, errors, meant, plain)
                continue
            if _is_call_shaped(value):
                if self._add(value, len(calls) + 1, calls, errors):
                    if first == -1:
                        first = at
                    mark = at  # (a call read without a problem: see reading_copies)
                    made = (calls[-1].function.name, calls[-1].function.arguments)
                last_end = stop
            pos = stop  # a JSON object that is not a call is data: what it holds is not a call either
        if not calls:
            tag = MarkerScanner(text, PYTHON_TAG).next(0)
            if tag != -1 and errors.room():
                errors.append(
                    f"{PYTHON_TAG} should be followed by a JSON tool call; "
                    f"got {excerpt(text, skip_ws(text, tag + len(PYTHON_TAG)))}."
                )
            return ParseResult(text, None, errors.final())
        rest = _skip_separators(text, last_end)
        if rest < n and errors.room():
            errors.append(
                f"text after the last tool call should be empty; got {excerpt(text, rest)} (ignored)."
            )
        content = text[: first if broken == -1 else min(first, broken)].rstrip()
        if content.endswith(PYTHON_TAG):
            content = content[: -len(PYTHON_TAG)].rstrip()
        return ParseResult(content or None, calls, errors.final())

    @staticmethod
    def _skip_repeats(
        text: str,
        at: int,
        stop: int,
        pos: int,
        braces: MarkerScanner,
        errors: Problems,
        meant: bool,
        plain: bool,
    ) -> int:
        """Past the copies of the broken object at ``at`` that follow it (a looping model), counted, not read.

        Among fences or reasoning blocks (not ``plain``) the search for the next brace is still made from where
        each copy's reading ends, as reading them would (a fence may hide some)."""
        nxt = braces.next(pos)
        if nxt == -1:
            return pos
        head = _OBJECT_START.match(text, nxt)
        # what this failure depended on: the tag before it, 200 characters (is it meant as a call?), the decoder's
        # error, and the next candidate
        start = at - len(PYTHON_TAG)
        if start < 0:  # (the copies have text before them where this one has none)
            return pos
        upto = max(stop + 9, at + 200, head.end() if head is not None else nxt + 1)
        copies = count_repeats(text, start, nxt - at, upto)
        if copies and not plain:
            copies, following = confirmed_copies(braces.next, pos, nxt, nxt - at, copies, braces)
            if meant:
                errors.dropped += copies
            # (asked again from the brace it found, or from where it found none: the same answer)
            return following if following != -1 else pos + copies * (nxt - at)
        if meant:
            errors.dropped += copies
        return nxt + copies * (nxt - at)

    @staticmethod
    def _add(
        item: JSONValue, index: int, calls: list[ChatCompletionMessageToolCall], errors: Problems
    ) -> bool:
        try:
            name, args = call_from_object(item)
        except ValueError as exc:
            if errors.room():
                errors.append(f"tool call #{index} should be a call object; {exc}.")
            return False
        calls.append(make_tool_call(name, args))
        return True

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
