"""The scanning engine: one forward reading of a text led by start markers, shared by the formats.

A format that starts each call (or each section of calls) with a marker (``<tool_call>``, ``[TOOL_CALLS]``, a
brace then a key, one of several tags ...) reads its calls through a :class:`Scan`. The engine owns what every
such format needs and no grammar does: finding the markers that count (outside fences, inline code and reasoning
blocks: :class:`~hermes_envs.parsers._scan.MarkerScanner`, the first of several: :class:`FirstMarker`), the error
cap (:class:`~hermes_envs.parsers._result.Problems`), the call objects and their ids, and the two shortcuts that
keep a looping model's output linear: copies of the call just read are built, not read again
(:func:`~hermes_envs.parsers._scan.local_copies`; past the marker searches a section end makes:
:meth:`FirstMarker.repeated`), and copies of a broken call past the error cap are counted, not decoded
(:meth:`Scan.broken_copies`). A format's reader decodes the call at each position :meth:`Scan.segments` yields
and says where the next one is (:meth:`Scan.resume`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Protocol

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._calls import make_tool_call, new_call_id
from hermes_envs.parsers._json import FAR, JsonMemo
from hermes_envs.parsers._result import MAX_ERRORS, ParseResult, Problems, finish
from hermes_envs.parsers._scan import (
    READ_MARGIN,
    MarkerScanner,
    confirmed_copies,
    count_repeats,
    local_copies,
    reading_copies,
)
from hermes_envs.parsers._types import ParsedPair, ToolSchema

__all__ = ["FirstMarker", "Scan", "fast_parse"]


class Scan:
    """One parse of ``text``: the markers to read, the calls and problems met, and the copies skipped.

    ``new_id`` draws an id for a call whose text gives none (a format's own id shape, such as Mistral's).
    """

    __slots__ = (
        "_made",
        "_made_problems",
        "_mark",
        "_new_id",
        "_pattern",
        "_plain",
        "_replay_all",
        "_replay_on",
        "_resume",
        "_scanner",
        "_several",
        "calls",
        "errors",
        "first",
        "index",
        "markers",
        "memo",
        "skipped",
        "text",
    )

    def __init__(
        self,
        text: str,
        marker: str | tuple[str, ...],
        *,
        new_id: Callable[[], str] = new_call_id,
        pattern: re.Pattern[str] | None = None,
        think_close: int | None = None,
        replay: bool = True,
        replay_broken: bool = False,
        start: int = 0,
        memo: JsonMemo | None = None,
    ) -> None:
        """``marker``: the marker every call starts with, or several (each call, or each section of calls,
        starting with one of them). ``pattern`` (starting with ``marker``) narrows which occurrences are markers;
        ``start``: where the search for markers begins (a format that read something else first).
        ``replay=False`` reads every copy of a call again instead of building it from the last reading (the
        general reading, for tests that compare the two); ``replay_broken`` also builds the copies of a reading
        that made no call (its problems counted), for a format whose broken calls are not counted by
        :meth:`broken_copies`. ``memo``: the JSON scans' memo, when the format already read JSON before the
        markers."""
        self.text = text
        if isinstance(marker, str) or len(marker) == 1:
            one = marker if isinstance(marker, str) else marker[0]
            self._scanner: MarkerScanner | None = MarkerScanner(text, one, pattern, think_close)
            self._several: FirstMarker | None = None
            self.markers: MarkerScanner | FirstMarker = self._scanner
        else:
            self._scanner = None
            self._several = FirstMarker([MarkerScanner(text, m, pattern, think_close) for m in marker])
            self.markers = self._several
        self._pattern = pattern
        #: where the first marker that counts is (-1: none, the text holds no call)
        self.first = self.markers.next(start)
        self.calls: list[ChatCompletionMessageToolCall] = []
        self.errors = Problems()
        self.memo = JsonMemo() if memo is None else memo
        #: the number of the call being read (1 for the first marker), as problems name it
        self.index = 0
        self._new_id = new_id
        self._replay_on = replay
        self._replay_all = replay_broken
        self._plain: bool | None = None  # no fences or reasoning tags in the text (checked once, when needed)
        # the last reading that made calls (see reading_copies): where its marker was (-1: none), the calls it
        # made (name, arguments, the id the text gave or None) and the problems it met
        self._mark = -1
        self._made: list[tuple[str, str, str | None]] = []
        self._made_problems = 0
        self._resume = -1
        #: how far the last step of :meth:`segments` moved past copies it built instead of reading (0: none)
        self.skipped = 0

    def segments(self, first: int | None = None) -> Iterator[int]:
        """The position of each call to read, in order, from ``first`` (default: the first marker). After
        reading the call there, the reader calls :meth:`resume` with the position of the next call (-1: none);
        without it the reading stops.

        A call whose reading would repeat the last one's exactly (a looping model's copies: same text, nothing
        read further than the copy) is not yielded: its calls are built again and its problems counted."""
        errors, memo, several = self.errors, self.memo, self._several
        pos = self.first if first is None else first
        while pos != -1:
            mark = self._mark
            self.skipped = 0
            if (
                mark != -1
                and memo.reach < FAR
                and self._replay_on
                and (len(errors) >= MAX_ERRORS or not self._made_problems)
            ):
                copies = self._copies(mark, pos)
                if copies:
                    self._replay(copies)
                    self.skipped = copies * (pos - mark)
                    pos += self.skipped
            self._mark = -1
            problems_at = len(errors) + errors.dropped
            memo.reach = 0
            self._made = []
            self.index += 1
            self._resume = -1
            if several is not None:
                several.searches = 0
            yield pos
            if self._made or self._replay_all:
                self._mark = pos
                self._made_problems = len(errors) + errors.dropped - problems_at
            pos = self._resume

    def _copies(self, mark: int, pos: int) -> int:
        """How many copies of the reading from ``mark`` to ``pos`` follow at ``pos`` (see
        :func:`~hermes_envs.parsers._scan.reading_copies`), kept to what the marker searches it made allow."""
        scanner = self._scanner
        if scanner is not None:  # (its reading searched for the marker at pos)
            return local_copies(self.text, mark, pos, self._reach(pos), scanner)
        copies = reading_copies(self.text, mark, pos, self.memo.reach)
        several = self._several
        if copies and several is not None and several.searches:
            copies = several.repeated(pos - mark, pos, copies)
        return copies

    def mention(self) -> None:
        """The marker just yielded starts no call (a mention of the tag, as prose): it does not count as one."""
        self.index -= 1

    def _reach(self, pos: int) -> int:
        """How far the last reading, and the marker search that found ``pos``, looked: a pattern marker's match
        may run past the margin :func:`~hermes_envs.parsers._scan.reading_copies` allows a plain marker."""
        reach = self.memo.reach
        if self._pattern is not None:
            head = self._pattern.match(self.text, pos)
            if head is not None and head.end() > reach:
                reach = head.end()
        return reach

    def _replay(self, copies: int) -> None:
        """Build the calls and count the problems of ``copies`` more readings like the last one."""
        calls, new_id, made = self.calls, self._new_id, self._made
        if len(made) == 1:  # (the usual copy: one call; one loop, not one generator per copy)
            ((name, args, given),) = made
            calls.extend([make_tool_call(name, args, given or new_id()) for _ in range(copies)])
        elif made:  # (a broken reading's copies make no call: none built)
            for _ in range(copies):
                calls.extend([make_tool_call(name, args, given or new_id()) for name, args, given in made])
        self.errors.dropped += copies * self._made_problems
        self.index += copies

    def resume(self, pos: int) -> None:
        """Where the next marker to read is (-1: none): the reading of the current one is done."""
        self._resume = pos

    def reached(self, pos: int) -> None:
        """The reading of the current marker looked at text up to ``pos`` (exclusive), besides what its JSON
        scans through :attr:`memo` read: copies are only built from a reading that looked no further than a copy."""
        if pos > self.memo.reach:
            self.memo.reach = pos

    def call(self, name: str, arguments: str, given_id: str | None = None) -> None:
        """Add a call read at the current marker (``arguments`` a JSON string; ``given_id`` the id the text
        gave, else a fresh one is drawn)."""
        self.calls.append(make_tool_call(name, arguments, given_id or self._new_id()))
        self._made.append((name, arguments, given_id))

    def problem(self, message: str) -> None:
        """List a problem (or only count it, past the cap). Build costly messages behind ``errors.room()``."""
        if self.errors.room():
            self.errors.append(message)

    def broken_copies(
        self, pos: int, nxt: int, upto: int, resume: int, *, since: int | None = None, counted: bool = True
    ) -> tuple[int, int]:
        """A looping model repeats one broken call: ``(copies, the next marker after them)``.

        The call at ``pos`` failed having looked only at ``text[since:upto]`` (``since``: ``pos`` unless the
        reading also looked before its marker), its reading resumed the marker search at ``resume`` and found the
        next marker at ``nxt``. Each copy of that stretch one period (``nxt - pos``) on fails the same way: it is
        counted as one more call and one more problem (``counted=False``: not a problem), not decoded. For use
        past the error cap (the problems are only counted). Where fences or reasoning tags are about, each copy's
        marker search is still made, from where its reading would make it."""
        period = nxt - pos
        copies = count_repeats(self.text, pos if since is None else since, period, upto)
        if not copies:
            return 0, nxt
        if self._plain is None:
            self._plain = _plain(self.text)
        if self._plain:
            # no fences or reasoning: a marker counts by the character before it, the same before each copy's
            # marker as before the one at ``nxt`` (it is in the stretch repeated), so the last copy's is next
            nxt += copies * period
        else:
            copies, nxt = confirmed_copies(self.markers.next, resume, nxt, period, copies, self._scanner)
        self.index += copies
        if counted:
            self.errors.dropped += copies
        return copies, nxt

    def result(self) -> ParseResult:
        """The content before the first marker and the calls; the whole text when no call was read."""
        return finish(self.text, self.first, self.calls, self.errors)


class FirstMarker:
    """The first marker that counts among several (one :class:`~hermes_envs.parsers._scan.MarkerScanner` each),
    for a format whose calls start with one of several tags."""

    __slots__ = ("_scanners", "searched_at", "searches", "think_close")

    def __init__(self, scanners: list[MarkerScanner]) -> None:
        self._scanners = scanners
        #: where the first ``</think>`` is (-1: none)
        self.think_close = scanners[0].think_close if scanners else -1
        #: the searches made since :class:`Scan` last reset the count, and where the last one was made from
        self.searches = 0
        self.searched_at = 0

    def next(self, pos: int) -> int:
        """Where the first marker that counts at or after ``pos`` is (-1: none)."""
        self.searches += 1
        self.searched_at = pos
        best = -1
        for scanner in self._scanners:
            p = scanner.next(pos)
            if p != -1 and (best == -1 or p < best):
                best = p
        return best

    def repeated(self, period: int, pos: int, copies: int) -> int:
        """How many of ``copies`` (a reading repeated every ``period`` from ``pos``, whose marker searches were
        made since the count was reset) to build: the copies before the first fence, backtick or reasoning tag
        any search could meet; else, for one search, those whose search reads the same text in the same state one
        period on (the scanners are then left as those searches would leave them); else none."""
        scanners, searched_at = self._scanners, self.searched_at
        skipped = pos + copies * period + READ_MARGIN
        limit = min(scanner.local_until(searched_at, skipped) for scanner in scanners)
        if limit >= skipped:
            return copies
        fit = (limit - READ_MARGIN - pos) // period
        if fit > 0:
            return fit
        if self.searches != 1:
            return 0
        for scanner in scanners:
            copies = scanner.predictable(searched_at, period, copies)
        for scanner in scanners if copies else ():
            scanner.advance(period, copies)
        return copies


def _plain(text: str) -> bool:
    """True when ``text`` holds none of :data:`~hermes_envs.parsers._scan.CONTEXT_MARKERS` (no fence, no reasoning
    tag): then whether a marker counts depends only on the character before it.

    May answer False for a plain text (a ``rethink>``): the caller then takes the general path, same answers. Four
    searches instead of six (one per tag pair), each after a search for a single character of it (``memchr``,
    ~50x faster than a search for a string on 100 KB): on a looping model's 100 KB of broken calls the four
    string searches alone cost what upstream's whole parse did."""
    return not (
        ("`" in text and "```" in text)
        or ("~" in text and "~~~" in text)
        or (">" in text and "k" in text and "think>" in text)
        or ("K" in text and "THINK]" in text)
    )


class _Parser(Protocol):
    def parse_detailed(self, text: str, tools: list[ToolSchema] | None = None) -> ParseResult: ...


def fast_parse(markers: tuple[str, ...], general: Callable[..., ParsedPair]) -> Callable[..., ParsedPair]:
    """The plain-text fast path: a ``parse`` (``general`` otherwise) that answers a text holding none of
    ``markers`` (strings one of which every call holds) with ``(text, None)``, the markers held as closure
    constants: a reply holding none costs what upstream's ``if MARKER not in text`` costs (a loop over a tuple
    attribute cost 10-30% more per reply)."""
    if len(markers) == 1:
        (one,) = markers

        def parse(self: _Parser, text: str, tools: list[ToolSchema] | None = None) -> ParsedPair:
            if type(text) is str and one not in text and (tools is None or type(tools) is list):
                return text, None
            result = self.parse_detailed(text, tools)
            return result.content, result.tool_calls

    elif len(markers) == 2:
        first, second = markers

        def parse(self: _Parser, text: str, tools: list[ToolSchema] | None = None) -> ParsedPair:
            if (
                type(text) is str
                and first not in text
                and second not in text
                and (tools is None or type(tools) is list)
            ):
                return text, None
            result = self.parse_detailed(text, tools)
            return result.content, result.tool_calls

    else:
        return general
    parse._fast_path = True  # type: ignore[attr-defined]
    parse.__doc__ = general.__doc__
    parse.__qualname__ = general.__qualname__
    return parse
