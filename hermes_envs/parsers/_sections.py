"""Formats whose calls sit in a section of special-token markers (DeepSeek V3/V3.1, Kimi K2)."""

from __future__ import annotations

import os
import re
from typing import ClassVar

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._base import ToolCallParser
from hermes_envs.parsers._calls import make_tool_call
from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._json import JsonMemo, arguments_to_json, excerpt, scan_standard, skip_ws
from hermes_envs.parsers._result import ParseResult
from hermes_envs.parsers._scan import Finder
from hermes_envs.parsers._types import ToolSchema

__all__ = ["SectionedJsonParser"]

# what makes a marker an example or deliberation (see MarkerScanner): prose holding one is read the general way
_CONTEXT = ("`", "~~~", "<think>", "[THINK]")
_CONTROL = re.compile(r"[\x00-\x1f]")


class SectionedJsonParser(ToolCallParser):
    """Formats with special-token markers: ``SECTION_BEGIN (CALL_BEGIN ... CALL_END)* SECTION_END``.

    Subclasses set the four markers and implement :meth:`_read_call`, which reads one call's header and JSON
    arguments starting just after ``CALL_BEGIN``. Text after the section end is ignored (and reported if it is
    not whitespace); a missing section end (cut-off output) is fine, and a later section, or a call written after
    the section end without a new section marker, is read as well.
    """

    section_begin: ClassVar[str]
    section_begin_alts: ClassVar[tuple[str, ...]] = ()  # other spellings of the section start
    section_end: ClassVar[str]
    call_begin: ClassVar[str]
    call_end: ClassVar[str]
    # the usual spelling of one call up to its JSON arguments (group 1: the name), and what follows them, from
    # the whitespace before the call marker to after the call end: read by _parse_plain (None: no such reading)
    plain_head: ClassVar[re.Pattern[str] | None] = None
    plain_tail: ClassVar[re.Pattern[str]]
    _prose_markers: ClassVar[tuple[str, ...]] = ()

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        """Return ``(name, arguments_json, call_id or None, end)``; raise ValueError with a reason.

        It must read JSON with ``memo`` and read other text only up to the first ``<`` after ``pos`` (every
        marker starts with one), or a marker's length past it: ``reading_copies`` relies on it."""
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "call_begin" in cls.__dict__ or "section_begin_alts" in cls.__dict__:
            # what must not come before the section for _parse_plain to apply (worked out once per class)
            cls._prose_markers = (cls.call_begin, *cls.section_begin_alts, *_CONTEXT)

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        # the section and call markers usually share a long prefix (``<｜tool▁call``, ``<|tool_call``): one test
        if not hasattr(cls, "section_begin"):
            return ()  # (this abstract class)
        markers = (cls.section_begin, *cls.section_begin_alts, cls.call_begin)
        shared = os.path.commonprefix(markers)
        return (shared,) if len(shared) >= 4 else markers

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        plain = self._parse_plain(text)
        return self._parse_general(text) if plain is None else plain

    def _parse_plain(self, text: str) -> ParseResult | None:
        """The usual output read without the general machinery: prose with no fence, backtick or reasoning tag,
        then sections of calls in the plain spelling (:attr:`plain_head`, JSON object arguments, :attr:`plain_tail`)
        with such prose between and after them (ignored, as the general reading ignores it). None for any other
        text, which the general reading then reads from the start (it gives the same answer on every text this one
        accepts)."""
        head = self.plain_head
        start = text.find(self.section_begin)
        if head is None or start == -1 or "</think>" in text:
            return None
        for marker in self._prose_markers:
            if text.find(marker, 0, start) != -1:
                return None
        tail = self.plain_tail
        calls: list[ChatCompletionMessageToolCall] = []
        section = start
        last = -1  # where the last call's text began
        while True:
            pos = section + len(self.section_begin)
            before = len(calls)
            while (match := head.match(text, pos)) is not None:
                # (a cheap check first: the middles of two different calls differ)
                if (
                    last != -1
                    and 2 * pos - last <= len(text)
                    and text[(pos + last) // 2] == text[(3 * pos - last) // 2]
                ):
                    if text.startswith(text[last:pos], pos):
                        return None  # a model looping on one call: the general reading builds the copies
                last = pos
                got = self._plain_name(match)
                if got is None:
                    return None
                at = match.end()
                try:
                    value, end = scan_standard(text, at)  # valid JSON as written: kept as is, not re-encoded
                except (StopIteration, ValueError, RecursionError):
                    return None
                if type(value) is not dict:
                    return None
                closing = tail.match(text, end)
                if closing is None:
                    return None
                calls.append(make_tool_call(got[0], text[at:end], got[1]))
                pos = closing.end()
            pos = skip_ws(text, pos)
            if len(calls) == before or not text.startswith(self.section_end, pos):
                return None
            # the prose up to the next section (or the end) must be as plain as the prose before the first
            after = pos + len(self.section_end)
            section = text.find(self.section_begin, after)
            stop = len(text) if section == -1 else section
            for marker in self._prose_markers:
                if text.find(marker, after, stop) != -1:
                    return None
            if section == -1:
                return ParseResult(text[:start].rstrip() or None, calls, [])

    def _plain_name(self, head: re.Match[str]) -> tuple[str, str | None] | None:
        """``(name, call id or None)`` of a call whose :attr:`plain_head` matched; None to read it the general way."""
        return head.group(1), None

    def _parse_general(self, text: str) -> ParseResult:
        # a reading that made no call is repeated too: a looping model's broken copies are built like the others
        scan = Scan(text, (self.section_begin, *self.section_begin_alts, self.call_begin), replay_broken=True)
        if scan.first == -1:
            return ParseResult(text, None)
        ends = Finder(text, self.call_end)
        begins = Finder(text, self.call_begin)
        first = scan.first
        if not text.startswith(self.call_begin, first):  # a section: its first call
            first = self._next_call(scan, begins, first + self._section_length(text, first))
        for pos in scan.segments(first):
            scan.resume(self._read(scan, ends, begins, pos))
        return scan.result()

    def _section_length(self, text: str, at: int) -> int:
        """The length of the section-begin spelling at ``at``."""
        return next(len(m) for m in (self.section_begin, *self.section_begin_alts) if text.startswith(m, at))

    def _read(self, scan: Scan, ends: Finder, begins: Finder, pos: int) -> int:
        """Read the call whose call marker is at ``pos``; return where the next call marker is (-1: none)."""
        text, errors = scan.text, scan.errors
        start = pos + len(self.call_begin)
        try:
            name, args, call_id, end = self._read_call(text, start, scan.index, scan.memo)
        except ValueError as exc:
            if errors.room():
                errors.append(f"tool call #{scan.index} should be well formed; {exc}.")
            stop = ends.find(start)
            nxt = begins.find(start)
            if stop != -1 and (nxt == -1 or stop < nxt):
                return self._next_call(scan, begins, stop + len(self.call_end))
            return nxt
        scan.call(name, args, call_id)
        end = skip_ws(text, end)
        if text.startswith(self.call_end, end):
            return self._next_call(scan, begins, end + len(self.call_end))
        if end >= len(text):
            return -1  # cut off after a complete call: keep it
        if errors.room():
            errors.append(
                f"tool call #{scan.index} should end with {self.call_end}; got {excerpt(text, end)} (call kept)."
            )
        stop = ends.find(end)
        nxt = begins.find(end)
        if stop != -1 and (nxt == -1 or stop < nxt):
            return self._next_call(scan, begins, stop + len(self.call_end))
        return nxt

    def _next_call(self, scan: Scan, begins: Finder, pos: int) -> int:
        """The next call marker from ``pos`` inside a section (-1: none): past whitespace and the section end
        (another section may follow later in the text, or a call without its own section marker); other text
        there is reported and skipped."""
        text, n = scan.text, len(scan.text)
        while True:
            pos = skip_ws(text, pos)
            if pos >= n:
                return -1
            if text.startswith(self.section_end, pos):
                pos = scan.markers.next(pos + len(self.section_end))
                if pos == -1:
                    return -1
                if not text.startswith(self.call_begin, pos):
                    pos += self._section_length(text, pos)
                continue
            if text.startswith(self.call_begin, pos):
                return pos
            nxt = begins.find(pos)
            if scan.errors.room():
                scan.errors.append(
                    f"text inside the tool-call section should be a call; got {excerpt(text, pos)} (ignored)."
                )
            if nxt == -1:
                return -1
            pos = nxt

    def _json_arguments(self, text: str, pos: int, memo: JsonMemo) -> tuple[str, int]:
        pos = skip_ws(text, pos)
        if pos >= len(text):
            raise ValueError("the arguments were cut off (end of text)")
        value, end, reason = memo.scan(text, pos)
        if reason is not None:
            raise ValueError(f"{reason} at offset {end}")
        if type(value) is dict and _CONTROL.search(text, pos, end) is None:
            # as vLLM keeps these formats' arguments: the object as the model wrote it (it is valid JSON: it
            # decoded, and holds no raw control character, which only the lenient decoder accepts in strings)
            return text[pos:end], end
        return arguments_to_json(value), end
