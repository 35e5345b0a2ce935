"""JSON calls wrapped in tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (hermes, qwen, longcat)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._json import FAR, string_arguments
from hermes_envs.parsers._scan import confirmed_copies, local_copies
from hermes_envs.parsers._types import ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    MAX_ERRORS,
    Finder,
    JsonMemo,
    MarkerScanner,
    ParseResult,
    Problems,
    ToolCallParser,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    finish,
    join_content,
    make_tool_call,
    register_parser,
    skip_ws,
)

_WS_CHARS = frozenset(" \t\r\n\f\v")
_CONTEXT_MARKERS = ("```", "~~~", "<think>", "</think>", "[THINK]", "[/THINK]")

__all__ = ["HermesParser", "JsonTaggedParser", "LongcatParser"]


class JsonTaggedParser(ToolCallParser):
    """One JSON object per ``start_tag ... end_tag`` pair.

    The JSON is read with a JSON decoder from just after the start tag, so an argument string that contains the
    end tag (a file about tool calls, say) does not cut the call. A complete JSON object whose end tag is missing
    (output cut by max tokens right after it) is kept. A JSON list of call objects, or several JSON objects one
    after another, inside one tag are accepted.
    """

    start_tag: ClassVar[str] = "<tool_call>"
    end_tag: ClassVar[str] = "</tool_call>"

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        return (cls.start_tag,)

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        start_tag, end_tag = self.start_tag, self.end_tag
        starts = MarkerScanner(text, start_tag)
        first = starts.next(0)
        if first == -1:
            return ParseResult(text, None)
        ends = Finder(text, end_tag)
        calls: list[ChatCompletionMessageToolCall] = []
        errors = Problems()
        memo = JsonMemo()
        index = 0
        pos = first
        n = len(text)
        tag_len = len(start_tag)
        plain: bool | None = None  # no fences or reasoning blocks (checked once, when first needed)
        # the last call read (see reading_copies): where its marker was (-1: none), the problems met before it
        # and the calls it made
        mark = -1
        problems_at = made_problems = 0
        made: list[tuple[str, str]] = []
        while pos != -1:
            if mark != -1 and memo.reach < FAR and (len(errors) >= MAX_ERRORS or not made_problems):
                copies = local_copies(text, mark, pos, memo.reach, starts)
                if copies:
                    # copies of the call just read, one after another: each gives the same calls and problems,
                    # so they are built and counted, not read again
                    for _ in range(copies):
                        for name, args in made:
                            calls.append(make_tool_call(name, args))
                    errors.dropped += copies * made_problems
                    index += copies
                    pos += copies * (pos - mark)
            mark = -1
            problems_at = len(errors) + errors.dropped
            memo.reach = 0
            index += 1
            body = pos + tag_len
            while body < n and text[body] in _WS_CHARS:  # usually one newline: cheaper than a regex
                body += 1
            if body >= n:
                if errors.room():
                    errors.append(
                        f"tool call #{index} should hold a JSON object; the text ends right after {start_tag}."
                    )
                break
            value, after, reason = memo.scan(text, body)
            if reason is not None:  # the hot path of degenerate output: no formatting past the error cap
                if errors.room():
                    errors.append(
                        f"tool call #{index} should be valid JSON; got {excerpt(text, body)} ({reason} at offset {after})."
                    )
                stop = ends.find(body)
                nxt = starts.next(body)
                if stop != -1 and (nxt == -1 or stop < nxt):
                    nxt = starts.next(stop + len(end_tag))
                elif (
                    nxt != -1
                    and len(errors) >= MAX_ERRORS
                    and reason.startswith(("Expecting", "Invalid"))  # the decoder read nothing past the error
                ):
                    # A looping model repeats the same broken call: when the text this failure depended on (up
                    # to the decoder's error and the next marker) recurs right after it, the copy fails the same
                    # way one period later, so the run of copies is counted without decoding each.
                    period = nxt - pos
                    window = text[pos : max(after + 9, nxt + tag_len)]
                    copies = 0
                    at = nxt
                    while text.startswith(window, at):
                        at += period
                        copies += 1
                    if copies:
                        if plain is None:
                            plain = not any(m in text for m in _CONTEXT_MARKERS)
                        if plain:  # no fences or reasoning: a marker counts by the character before it
                            nxt = starts.next(at)
                        else:  # the marker search is still made from each copy, as decoding each would make it
                            copies, nxt = confirmed_copies(starts.next, body, nxt, period, copies, starts)
                        index += copies
                        errors.dropped += copies
                pos = nxt
                continue
            made = []
            while True:
                items = value if isinstance(value, list) else (value,)
                for item_no, item in enumerate(items, 1):
                    try:
                        name, args = call_from_object(item)
                    except ValueError as exc:
                        where = f"#{index}" if len(items) == 1 else f"#{index} (item {item_no})"
                        kept = string_arguments(item)
                        if kept is None:
                            if errors.room():
                                errors.append(f"tool call {where} should be a call object; {exc}.")
                            continue
                        name, args = (
                            kept  # as vLLM and SGLang: the string is the arguments (the tool says no)
                        )
                        if errors.room():
                            errors.append(
                                f"tool call {where} ({name}) should have a JSON object as arguments; got the "
                                f"string {args[:60]} (kept as a JSON string)."
                            )
                    calls.append(make_tool_call(name, args))
                    made.append((name, args))
                after = skip_ws(text, after)
                # several JSON objects in one tag (models do this for parallel calls): each is a call
                if after >= n or text[after] != "{":
                    break
                more, more_after, more_reason = memo.scan(text, after)
                if more_reason is not None:
                    break
                value, after = more, more_after
            if text.startswith(end_tag, after):
                after += len(end_tag)
            elif after < n:
                if errors.room():
                    errors.append(
                        f"tool call #{index} should end with {end_tag} right after its JSON; got "
                        f"{excerpt(text, after)} (ignored)."
                    )
                stop = ends.find(after)
                nxt = starts.next(after)
                if stop != -1 and (nxt == -1 or stop < nxt):
                    after = stop + len(end_tag)
            if made:
                mark = pos
                made_problems = len(errors) + errors.dropped - problems_at
            pos = starts.next(after)
        return finish(text, first, calls, errors)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = []
        for call in tool_calls:
            _, name, args = call_parts(call)
            blocks.append(f"{self.start_tag}\n{dumps({'name': name, 'arguments': args})}\n{self.end_tag}")
        return join_content(content, "\n".join(blocks))


@register_parser("hermes", "qwen")
class HermesParser(JsonTaggedParser):
    """Hermes / Qwen 2.5 / Qwen 3 (instruct) format: ``<tool_call>{json}</tool_call>``."""


@register_parser("longcat")
class LongcatParser(JsonTaggedParser):
    """LongCat format: ``<longcat_tool_call>{json}</longcat_tool_call>``."""

    start_tag = "<longcat_tool_call>"
    end_tag = "</longcat_tool_call>"
