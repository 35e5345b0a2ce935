"""Mistral: ``[TOOL_CALLS] [{...}, ...]`` (tokenizers before v11) and ``[TOOL_CALLS]NAME{ARGS}`` (v11+).

Both forms are read by the same parser, also mixed in one output, plus the ``[TOOL_CALLS]NAME[ARGS]{...}`` and
``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`` spellings some servers emit. ``render`` writes the list form by
default; ``MistralParser(style="v11")`` or ``style="args"`` writes the newer ones.

Call ids are 9 letters/digits, as vLLM generates them: Mistral's chat templates reject the next turn when a
tool-call id has any other shape. An id given in the output (``[CALL_ID]ID`` or an ``"id"`` in the list form) is
kept.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from typing import Literal

from hermes_envs.parsers._calls import random_bits
from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._types import JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    Finder,
    ParserError,
    ParseResult,
    ToolCallParser,
    arguments_to_json,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    register_parser,
    skip_ws,
)

__all__ = ["MistralParser"]

TOOL_CALLS = "[TOOL_CALLS]"
_NAME = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.\-]*)(?:\[CALL_ID\]([A-Za-z0-9_\-]*))?(?:\[ARGS\])?")


_MISTRAL_IDS: list[str] = []
_ALNUM_ONLY = bytes.maketrans(b"", b"")
os.register_at_fork(after_in_child=_MISTRAL_IDS.clear)  # (a forked child draws its own)


def mistral_call_id() -> str:
    """A fresh Mistral-style call id: 9 letters/digits (Mistral's chat templates reject any other shape)."""
    try:
        return _MISTRAL_IDS.pop()  # (atomic: two threads never get the same id)
    except IndexError:
        pass
    # 256 at a time: random bytes written in base64, whose 64 symbols less "+" and "/" are the 62 letters and
    # digits, each as likely (dropping symbols biases nothing), cut 9 at a time (was 9 divisions per id)
    while True:
        chars = base64.b64encode(random_bits(8 * 2048).to_bytes(2048, "little")).translate(
            _ALNUM_ONLY, b"+/="
        )
        ids = [chars[i : i + 9].decode("ascii") for i in range(0, len(chars) - 8, 9)]
        if ids:
            break
    _MISTRAL_IDS.extend(ids[1:])
    return ids[0]


def _given_id(item: JSONValue) -> str | None:
    """The ``"id"`` a list item carries (older Mistral outputs include one), if it is a usable string."""
    call_id = item.get("id") if isinstance(item, dict) else None
    return call_id if isinstance(call_id, str) and call_id.strip() else None


MistralStyle = Literal["list", "v11", "args"]


@register_parser("mistral")
class MistralParser(ToolCallParser):
    """Mistral's ``[TOOL_CALLS]`` formats (all of them)."""

    def __init__(self, style: MistralStyle = "list") -> None:
        if style not in ("list", "v11", "args"):
            raise ParserError(f"mistral render style should be 'list', 'v11' or 'args'; got {style!r}.")
        self.style = style

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        return (TOOL_CALLS,)

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        scan = Scan(text, TOOL_CALLS, new_id=mistral_call_id)
        if scan.first == -1:
            return ParseResult(text, None)
        lists = Finder(text, "[{")
        for pos in scan.segments():
            scan.resume(self._read(scan, lists, pos))
        if not scan.calls:
            # as vLLM: the payload that could not be read is the content, without the special token
            content = text.replace(TOOL_CALLS, "").strip()
            return ParseResult(content or None, None, scan.errors.final())
        return scan.result()

    def _read(self, scan: Scan, lists: Finder, pos: int) -> int:
        """Read the calls after the marker at ``pos`` (up to the next marker); return where the next one is."""
        text, errors = scan.text, scan.errors
        n = len(text)
        body = skip_ws(text, pos + len(TOOL_CALLS))
        following = scan.markers.next(body)  # the next marker bounds this one's payload
        limit = n if following == -1 else following
        end = body  # just after the last JSON read for this marker (body: none was read)
        problem: str | None = None  # why this marker's call could not be read (only built if listed)
        if body >= limit:
            if body >= n:
                problem = f"the text ends right after {TOOL_CALLS}"
        elif text[body] in "[{":
            value, stop, reason = scan.memo.scan(text, body)
            if reason is None:
                end = stop
                self._add_items(scan, value)
            elif errors.room():
                problem = f"{reason} at offset {stop}"
            elif following != -1 and reason.startswith(("Expecting", "Invalid")):
                # a looping model: the copies of this broken call that follow fail the same way (the decoder
                # read nothing past the error); reading goes on where the last copy's marker search was made
                period = following - pos
                upto = max(stop + 9, following + len(TOOL_CALLS))
                copies, following = scan.broken_copies(pos, following, upto, body)
                body = end = body + copies * period
        else:
            end, problem = self._read_named(scan, lists, body, limit)
        if problem is not None and errors.room():
            errors.append(f"tool call #{scan.index} should be well formed; {problem}.")
        nxt = scan.markers.next(end) if following == -1 or following < end else following
        if nxt == -1 and end > body:
            self._check_rest(scan, end)
        return nxt

    @staticmethod
    def _check_rest(scan: Scan, end: int) -> None:
        """Report text after the last call's JSON (``end``), but an end-of-sequence token."""
        text = scan.text
        rest = skip_ws(text, end)
        if scan.calls and rest < len(text) and text[rest:].rstrip() != "</s>" and scan.errors.room():
            scan.errors.append(
                f"text after the last tool call should be empty; got {excerpt(text, rest)} (ignored)."
            )

    def _read_named(self, scan: Scan, lists: Finder, body: int, limit: int) -> tuple[int, str | None]:
        """Read ``NAME{ARGS}`` (v11 and its spellings) or, failing that, a JSON list after junk at ``body``;
        return where the reading ended and the problem met (None: none, or not listed)."""
        text, errors = scan.text, scan.errors
        match = _NAME.match(text, body)
        start = skip_ws(text, match.end()) if match is not None else body
        if match is not None and (start >= limit or text.startswith("</s>", start)):
            # [TOOL_CALLS]NAME with nothing after it: a call without arguments (v11 templates omit {})
            scan.call(match.group(1), "{}", match.group(2) or None)
            return start, None
        if match is not None and text[start] == "{":
            value, stop, reason = scan.memo.scan(text, start)
            if reason is not None:
                return body, f"{reason} at offset {stop}" if errors.room() else None
            try:
                args = arguments_to_json(value)
            except ValueError as exc:
                return stop, str(exc)
            scan.call(match.group(1), args, match.group(2) or None)
            return stop, None
        # pre-v11 output with junk between the marker and the JSON list (vLLM reads the first [{...}])
        at = lists.find(body)
        value, stop, reason = (
            (None, body, "no JSON list") if at == -1 or at >= limit else scan.memo.scan(text, at)
        )
        if reason is None and isinstance(value, list):
            if errors.room():
                errors.append(
                    f"tool call #{scan.index} should follow {TOOL_CALLS} directly; got "
                    f"{excerpt(text, body, min(40, at - body))} before it (ignored)."
                )
            self._add_items(scan, value)
            return stop, None
        if errors.room():
            return body, f"expected a JSON list or NAME{{ARGS}}; got {excerpt(text, body)}"
        return body, None

    @staticmethod
    def _add_items(scan: Scan, value: JSONValue) -> None:
        items = value if isinstance(value, list) else (value,)
        for item_no, item in enumerate(items, 1):
            try:
                name, args = call_from_object(item)
            except ValueError as exc:
                if scan.errors.room():
                    scan.errors.append(
                        f"tool call #{scan.index} (item {item_no}) should be a call object; {exc}."
                    )
                continue
            scan.call(name, args, _given_id(item))

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        parts = [call_parts(c) for c in tool_calls]
        prefix = content or ""
        if self.style == "list":
            return prefix + TOOL_CALLS + " " + dumps([{"name": n, "arguments": a} for _, n, a in parts])
        sep = "[ARGS]" if self.style == "args" else ""
        for _, n, _ in parts:
            if _NAME.fullmatch(n) is None or "[" in n:
                raise ParserError(
                    f"a mistral {self.style} tool name should match [A-Za-z0-9_.-]+; got {n!r}."
                )
        return prefix + "".join(f"{TOOL_CALLS}{n}{sep}{dumps(a)}" for _, n, a in parts)
