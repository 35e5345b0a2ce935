"""Formats whose calls sit in a section of special-token markers (DeepSeek V3/V3.1, Kimi K2)."""

from __future__ import annotations

import os
import re
from typing import ClassVar

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._base import ToolCallParser
from hermes_envs.parsers._calls import make_tool_call
from hermes_envs.parsers._json import FAR, JsonMemo, arguments_to_json, excerpt, scan_standard, skip_ws
from hermes_envs.parsers._result import MAX_ERRORS, ParseResult, Problems, finish
from hermes_envs.parsers._scan import READ_MARGIN, Finder, MarkerScanner, reading_copies
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
        scanners = [(MarkerScanner(text, m), len(m)) for m in (self.section_begin, *self.section_begin_alts)]

        def next_section(at: int) -> tuple[int, int]:
            best, size = -1, 0
            for scanner, length in scanners:
                p = scanner.next(at)
                if p != -1 and (best == -1 or p < best):
                    best, size = p, length
            return best, size

        section, section_len = next_section(0)
        bare_calls = MarkerScanner(text, self.call_begin)
        bare = bare_calls.next(0)
        searches = [bare_calls, *(scanner for scanner, _ in scanners)]
        if section == -1 and bare == -1:
            return ParseResult(text, None)
        if section != -1 and (bare == -1 or section <= bare):
            first, pos = section, section + section_len
        else:
            first = pos = bare
        ends = Finder(text, self.call_end)
        begins = Finder(text, self.call_begin)
        calls: list[ChatCompletionMessageToolCall] = []
        errors = Problems()
        memo = JsonMemo()
        index = 0
        n = len(text)
        # The reading since the last call marker (see reading_copies): where it began (-1: none, or it went through a
        # section end, whose search depends on fences), problems met so far, and the calls it made.
        mark = -1
        problems_at = 0
        made: list[tuple[str, str, str | None]] = []
        crossings = searched_at = (
            0  # section ends the reading since mark went through; where it searched last
        )
        while True:
            pos = skip_ws(text, pos)
            if pos >= n:
                break
            if text.startswith(self.section_end, pos):
                crossings += 1  # (the searches made here are checked when copies follow: see below)
                searched_at = pos + len(self.section_end)
                # another section may follow later in the text, or a call without its own section marker
                after = pos + len(self.section_end)
                pos, section_len = next_section(after)
                bare = bare_calls.next(after)
                if bare != -1 and (pos == -1 or bare < pos):
                    pos = bare
                    continue
                if pos == -1:
                    break
                pos += section_len
                continue
            if not text.startswith(self.call_begin, pos):
                nxt = begins.find(pos)
                if errors.room():
                    errors.append(
                        f"text inside the tool-call section should be a call; got {excerpt(text, pos)} (ignored)."
                    )
                if nxt == -1:
                    break
                pos = nxt
                continue
            if (
                mark != -1
                and memo.reach < FAR
                and (len(errors) >= MAX_ERRORS or len(errors) + errors.dropped == problems_at)
            ):
                # (every _read_call pattern stops at the "<" every marker starts with, or reads a marker past it:
                # a reading looks no further than reading_copies assumes; a listed problem names its call)
                copies = reading_copies(text, mark, pos, memo.reach)
                if copies and crossings:
                    # the searches for the next section look only nearby where no fence or reasoning block is
                    # about; else each search made at the section end must answer the same way one period on
                    period = pos - mark
                    skipped = pos + copies * period + READ_MARGIN
                    limit = min(search.local_until(searched_at, skipped) for search in searches)
                    if limit < skipped:
                        fit = (
                            limit - READ_MARGIN - pos
                        ) // period  # the copies before the first fence or tag
                        if fit > 0:
                            copies = fit
                        elif crossings != 1:
                            copies = 0
                        else:
                            for search in searches:
                                copies = search.predictable(searched_at, period, copies)
                            for search in searches if copies else ():
                                search.advance(period, copies)
                if copies:
                    # copies of the reading just done, one after another: each gives the same calls and
                    # problems, so they are counted and built, not read again
                    for _ in range(copies):
                        for name, args, call_id in made:
                            calls.append(make_tool_call(name, args, call_id))
                    errors.dropped += copies * (len(errors) + errors.dropped - problems_at)
                    index += copies
                    pos += copies * (pos - mark)
            mark, problems_at, memo.reach = pos, len(errors) + errors.dropped, 0
            crossings = 0
            made = []
            index += 1
            start = pos + len(self.call_begin)
            try:
                name, args, call_id, end = self._read_call(text, start, index, memo)
            except ValueError as exc:
                if errors.room():
                    errors.append(f"tool call #{index} should be well formed; {exc}.")
                stop = ends.find(start)
                nxt = begins.find(start)
                if stop != -1 and (nxt == -1 or stop < nxt):
                    pos = stop + len(self.call_end)
                elif nxt != -1:
                    pos = nxt
                else:
                    break
                continue
            calls.append(make_tool_call(name, args, call_id))
            made.append((name, args, call_id))
            end = skip_ws(text, end)
            if text.startswith(self.call_end, end):
                pos = end + len(self.call_end)
            elif end >= n:
                pos = end  # cut off after a complete call: keep it
            else:
                if errors.room():
                    errors.append(
                        f"tool call #{index} should end with {self.call_end}; got {excerpt(text, end)} (call kept)."
                    )
                stop = ends.find(end)
                nxt = begins.find(end)
                pos = (
                    stop + len(self.call_end)
                    if stop != -1 and (nxt == -1 or stop < nxt)
                    else (nxt if nxt != -1 else n)
                )
        return finish(text, first, calls, errors)

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
