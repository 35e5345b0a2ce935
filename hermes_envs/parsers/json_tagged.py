"""JSON calls wrapped in tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (hermes, qwen, longcat)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._json import string_arguments
from hermes_envs.parsers._types import JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    MAX_ERRORS,
    Finder,
    ParseResult,
    ToolCallParser,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    join_content,
    register_parser,
    skip_ws,
)

_WS_CHARS = frozenset(" \t\r\n\f\v")

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
        scan = Scan(text, self.start_tag)
        if scan.first == -1:
            return ParseResult(text, None)
        ends = Finder(text, self.end_tag)
        for pos in scan.segments():
            scan.resume(self._read(scan, ends, pos))
        return scan.result()

    def _read(self, scan: Scan, ends: Finder, pos: int) -> int:
        """Read the call at the start tag at ``pos``; return where the next start tag is (-1: none)."""
        text, errors = scan.text, scan.errors
        start_tag, end_tag = self.start_tag, self.end_tag
        n = len(text)
        body = pos + len(start_tag)
        while body < n and text[body] in _WS_CHARS:  # usually one newline: cheaper than a regex
            body += 1
        if body >= n:
            if errors.room():
                errors.append(
                    f"tool call #{scan.index} should hold a JSON object; the text ends right after {start_tag}."
                )
            return -1
        value, after, reason = scan.memo.scan(text, body)
        if reason is not None:  # the hot path of degenerate output: no formatting past the error cap
            return self._skip_broken(scan, ends, pos, body, after, reason)
        after = self._read_objects(scan, value, after)
        if text.startswith(end_tag, after):
            return scan.markers.next(after + len(end_tag))
        if after < n:
            after = self._past_text_after_json(scan, ends, after)
        return scan.markers.next(after)

    def _past_text_after_json(self, scan: Scan, ends: Finder, after: int) -> int:
        """Report text between a call's JSON and its end tag; return the end of that tag when it comes before the
        next start tag, else ``after``."""
        text, end_tag = scan.text, self.end_tag
        if scan.errors.room():
            scan.errors.append(
                f"tool call #{scan.index} should end with {end_tag} right after its JSON; got "
                f"{excerpt(text, after)} (ignored)."
            )
        stop = ends.find(after)
        nxt = scan.markers.next(after)
        return stop + len(end_tag) if stop != -1 and (nxt == -1 or stop < nxt) else after

    def _skip_broken(self, scan: Scan, ends: Finder, pos: int, body: int, after: int, reason: str) -> int:
        """Report the call at ``pos`` whose JSON is invalid (``reason`` at ``after``); return the next start tag,
        past its end tag when it has one, or past the copies of it a looping model wrote."""
        text, errors, end_tag = scan.text, scan.errors, self.end_tag
        if errors.room():
            errors.append(
                f"tool call #{scan.index} should be valid JSON; got {excerpt(text, body)} ({reason} at offset {after})."
            )
        stop = ends.find(body)
        nxt = scan.markers.next(body)
        if stop != -1 and (nxt == -1 or stop < nxt):
            return scan.markers.next(stop + len(end_tag))
        if (
            nxt != -1
            and len(errors) >= MAX_ERRORS
            and reason.startswith(("Expecting", "Invalid"))  # the decoder read nothing past the error
        ):
            # the text this failure depended on: up to the decoder's error and the next marker
            upto = max(after + 9, nxt + len(self.start_tag))
            nxt = scan.broken_copies(pos, nxt, upto, body)[1]
        return nxt

    @staticmethod
    def _read_objects(scan: Scan, value: JSONValue, after: int) -> int:
        """Make the calls of ``value`` (one call object, or a list of them) and of the JSON objects that follow
        it in the same tag (models write parallel calls so); return where the last one ends."""
        text, errors, index = scan.text, scan.errors, scan.index
        n = len(text)
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
                    name, args = kept  # as vLLM and SGLang: the string is the arguments (the tool says no)
                    if errors.room():
                        errors.append(
                            f"tool call {where} ({name}) should have a JSON object as arguments; got the "
                            f"string {args[:60]} (kept as a JSON string)."
                        )
                scan.call(name, args)
            after = skip_ws(text, after)
            if after >= n or text[after] != "{":
                return after
            more, more_after, more_reason = scan.memo.scan(text, after)
            if more_reason is not None:
                return after
            value, after = more, more_after

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
