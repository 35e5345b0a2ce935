"""Forward-only text scanning: cached searches (:class:`Finder`) and markers outside fences and reasoning.

Every parser reads model text in one forward pass: markers are found with :class:`Finder` (a cached ``str.find``
whose position never moves backwards), so the time taken grows linearly with the text even for degenerate output.

Over 400 lines: what lets a reader skip a looping model's copies (``reading_copies``, and the scanner's
``skip_copies`` / ``predictable`` / ``advance`` / ``local_until``) must sit beside the marker search whose reads
and state it accounts for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = [
    "CONTEXT_MARKERS",
    "MISTRAL_THINK_CLOSE",
    "MISTRAL_THINK_OPEN",
    "THINK_CLOSE",
    "READ_MARGIN",
    "THINK_OPEN",
    "CharsFinder",
    "Finder",
    "MarkerScanner",
    "PatternFinder",
    "confirmed_copies",
    "count_repeats",
    "local_copies",
    "reading_copies",
]


class Finder:
    """``text.find(needle, pos)`` for non-decreasing ``pos`` that never re-scans text it has already passed.

    The answer of the previous query is reused while it is still valid, so a parser can ask "where is the next
    closing tag?" from every marker without turning thousands of unclosed markers into quadratic work.
    An optional ``accept(position)`` predicate skips occurrences that do not qualify (it must depend only on the
    position, so cached answers stay valid).
    """

    __slots__ = ("_at", "_from", "accept", "needle", "text")

    def __init__(self, text: str, needle: str, accept: Callable[[int], bool] | None = None) -> None:
        self.text = text
        self.needle = needle
        self.accept = accept
        self._from = -1
        self._at = -1

    def find(self, pos: int) -> int:
        if 0 <= self._from <= pos and (self._at == -1 or self._at >= pos):
            return self._at
        self._from = pos
        at = self.text.find(self.needle, pos)
        while at != -1 and self.accept is not None and not self.accept(at):
            at = self.text.find(self.needle, at + 1)
        self._at = at
        return at

    @property
    def found(self) -> int:
        """The last query's answer (-1: none, or no query yet): a reader's copies account for what it looked at."""
        return self._at

    def exhausted(self, pos: int) -> bool:
        """True when a past query already showed there is no occurrence at or after ``pos``."""
        return self._at == -1 and 0 <= self._from <= pos

    def forget(self) -> None:
        """Drop the cached answer (a reader skipped the queries it belonged to)."""
        self._from = -1


class PatternFinder:
    """:class:`Finder` for a compiled pattern: the next match start at or after ``pos`` (same caching rule)."""

    __slots__ = ("_at", "_from", "end", "pattern", "text")

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text = text
        self.pattern = pattern
        self._from = -1
        self._at = -1
        self.end = -1  # where the match the last query found ends

    def find(self, pos: int) -> int:
        if 0 <= self._from <= pos and (self._at == -1 or self._at >= pos):
            return self._at
        self._from = pos
        match = self.pattern.search(self.text, pos)
        if match is None:
            self._at = -1
        else:
            self._at, self.end = match.span()
        return self._at

    def exhausted(self, pos: int) -> bool:
        """True when a past query already showed there is no match at or after ``pos``."""
        return self._at == -1 and 0 <= self._from <= pos

    def forget(self) -> None:
        """Drop the cached answer (a reader skipped the queries it belonged to)."""
        self._from = -1


class CharsFinder:
    """:class:`Finder` for the first of several single characters, each found by ``str.find`` (a C loop over the
    text): a regex character class such as ``[>\n]`` is tried one position at a time by the regex engine, about
    500 times slower on 100 KB without either character."""

    __slots__ = ("_finders",)

    def __init__(self, text: str, chars: str) -> None:
        self._finders = [Finder(text, c) for c in chars]

    def find(self, pos: int) -> int:
        best = -1
        for finder in self._finders:
            at = finder.find(pos)
            if at != -1 and (best == -1 or at < best):
                best = at
        return best


class _Fence(NamedTuple):
    start: int
    char: str
    length: int
    line_end: int  # index of the newline ending the opening line, or -1


# A fence line: up to 3 spaces or tabs, then a run of 3+ backticks or tildes (CommonMark). Found by the regex
# engine: a fence is then one C-speed search, not a loop of finds and character checks in Python.
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)


def _find_fence_open(text: str, pos: int) -> _Fence | None:
    """The next Markdown fence opening (```` ``` ```` or ``~~~`` at a line start) at or after ``pos``."""
    start = pos
    while start > 0 and pos - start < 3 and text[start - 1] in " \t":  # an indented fence line holding pos
        start -= 1
    while True:
        match = _FENCE_OPEN.search(text, start)
        if match is None:
            return None
        i, j = match.span(1)
        if i >= pos:
            return _Fence(i, text[i], j - i, text.find("\n", j))
        start = match.end()


_FAR = 1 << 62  # a read reaching the end of the text, whatever its length

# Per fence kind (char, length): its closing line, then (optionally) the next fence opening and the newline ending
# that opening line. One C-speed search for what the reading needs once a fence is passed: where it closes and
# which fence comes next (the same answers as a search for the closing line, then _find_fence_open from there).
_FENCE_NEXTS: dict[tuple[str, int], re.Pattern[str]] = {}
_new_fence = tuple.__new__  # a _Fence without NamedTuple's Python-level constructor


def _fence_close_and_next(text: str, fence: _Fence) -> tuple[int, _Fence | None]:
    """``(end of the line closing fence or -1, the next fence opening after that line or None)``."""
    if fence.line_end == -1:
        return -1, None
    key = (fence.char, fence.length)
    pattern = _FENCE_NEXTS.get(key)
    if pattern is None:
        if len(_FENCE_NEXTS) > 64:  # one per fence length met: degenerate text must not grow it unbounded
            _FENCE_NEXTS.clear()
        pattern = _FENCE_NEXTS[key] = re.compile(
            r"(^[ \t]{0,3}" + re.escape(fence.char) + rf"{{{fence.length},}}[ \t]*)(?=[\r\n]|\Z)"
            r"(?:.*?^[ \t]{0,3}(`{3,}|~{3,})[^\n]*(\n)?)?",
            re.MULTILINE | re.DOTALL,
        )
    match = pattern.search(text, fence.line_end + 1)
    if match is None:
        return -1, None
    i, j = match.span(2)
    if i == -1:
        return match.end(1), None
    return match.end(1), _new_fence(_Fence, (i, text[i], j - i, match.start(3)))


THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
#: Magistral (Mistral's reasoning models) writes its reasoning as [THINK]...[/THINK].
MISTRAL_THINK_OPEN = "[THINK]"
MISTRAL_THINK_CLOSE = "[/THINK]"


class MarkerScanner:
    """Finds the next tool-call marker in prose, skipping markers shown as examples.

    A marker does not count when it sits inside a *closed* Markdown code fence (```` ``` ```` or ``~~~``),
    directly after a backtick (inline code such as ```<tool_call>```), or inside a *closed* ``<think>...</think>``
    (or Magistral's ``[THINK]...[/THINK]``) reasoning block: those are examples or deliberation ("I should emit <tool_call> next"), not calls. An unclosed
    fence or reasoning block is ignored (it hides nothing). Output whose first ``</think>`` has no ``<think>``
    before it (the chat template put the opening tag in the prompt) is reasoning up to that tag. Queries must not
    go backwards; the next fence opening is cached like :class:`Finder` answers.
    """

    __slots__ = (
        "_blocks",
        "_clean",
        "_fence",
        "_finder",
        "_marker_len",
        "_read",
        "_reasoning_end",
        "text",
        "think_close",
    )

    def __init__(
        self, text: str, marker: str, pattern: re.Pattern[str] | None = None, think_close: int | None = None
    ) -> None:
        """``think_close``: where the first ``</think>`` is (-1: none), when the caller knows (see
        :attr:`think_close`): another scanner of the same text does not search the whole text for it again."""
        self.text = text
        # a pattern (starting with ``marker``) narrows which occurrences are candidates, at C speed
        self._finder: Finder | PatternFinder = (
            Finder(text, marker) if pattern is None else PatternFinder(text, pattern)
        )
        self._marker_len = len(marker) if pattern is None else -1  # -1: the pattern's match says
        # the stretch of text the last query's answer depended on, and the next fence before it (see skip_copies)
        self._read: tuple[int, int, _Fence | None] = (0, _FAR, None)
        # Most texts hold no fence, backtick or reasoning tag before their markers: then every candidate counts,
        # and the fence and reasoning state is only built once one of those appears (``_clean`` is how far the
        # text is known to hold none; -1 once the state is built). This is most of the cost of a short message.
        # A text without a character each of them needs (a backtick, "~", the "k" of <think>, the "K" of [THINK];
        # four memchr searches) holds none at all: no marker then costs the searches before it.
        plain = not ("`" in text or "~" in text or "k" in text or "K" in text)
        self._clean = len(text) if plain else 0
        # A `</think>` with no `<think>` before it closes reasoning whose opening tag was in the prompt (Qwen3
        # thinking, DeepSeek-R1/V3.1 templates): everything before it is deliberation, as reasoning parsers read it.
        # Only when a marker follows it (a `</think>` in the arguments of the last call is just text). A `</think>`
        # inside the arguments of an earlier call is read as the end of reasoning too, as a reasoning parser would.
        if think_close is None:  # (a search for one character first: ~50x faster than one for the tag)
            think_close = text.find(THINK_CLOSE) if "<" in text else -1
        close = think_close
        self.think_close = close
        end = close + len(THINK_CLOSE)
        lone = close != -1 and text.find(THINK_OPEN, 0, close) == -1 and text.find(marker, end) != -1
        self._reasoning_end = end if lone else 0

    def _build(self) -> None:
        """The fence and reasoning-block state, built when the text first shows a fence, backtick or tag."""
        text = self.text
        self._clean = -1
        self._fence = self._open(0)  # next fence opening not yet passed (None: no more)
        # per reasoning-block syntax: (opening finder, closing finder, opening length, closing length)
        self._blocks = [
            (Finder(text, o), Finder(text, c), len(o), len(c))
            for o, c in ((THINK_OPEN, THINK_CLOSE), (MISTRAL_THINK_OPEN, MISTRAL_THINK_CLOSE))
            if o in text
        ]

    def _plain_before(self, p: int) -> bool:
        """True when no backtick, ``~~~`` or reasoning opening starts before ``p`` (each character checked once)."""
        clean = self._clean
        if p <= clean:
            return True
        text = self.text
        start = clean - 6 if clean > 6 else 0  # a tag that straddles the previous boundary
        if (
            text.find("`", start, p) != -1
            or text.find("~~~", start, p) != -1
            or text.find(THINK_OPEN, start, p) != -1
            or text.find(MISTRAL_THINK_OPEN, start, p) != -1
        ):
            return False
        self._clean = p
        return True

    def _in_thinking(self, p: int, pos: int) -> int:
        """End of the closed reasoning block holding position ``p`` (searching from ``pos``), else -1."""
        for opening, closing, open_len, close_len in self._blocks:
            start = opening.find(pos)
            while start != -1 and start < p:
                end = closing.find(start + open_len)
                if end == -1:
                    break  # unclosed: it hides nothing
                if end > p:
                    return end + close_len
                start = opening.find(end + close_len)
        return -1

    def _open(self, pos: int) -> _Fence | None:
        return _find_fence_open(self.text, pos)

    def next(self, pos: int) -> int:
        if self._clean != -1:
            p = self._finder.find(pos)
            if p == -1 or (p >= self._reasoning_end and self._plain_before(p)):
                return p
            self._build()
        text = self.text
        low, high = pos - 4, pos  # what this query reads (an indented fence line, the character before p)
        before = self._fence
        while True:
            p = self._finder.find(pos)
            if p == -1:
                self._read = (low, _FAR, before)
                return -1
            fence = self._fence
            if fence is not None and fence.start < pos:
                fence = self._fence = self._open(pos)  # the caller moved past it (a call held it)
                high = _FAR if fence is None or fence.line_end == -1 else max(high, fence.line_end + 1)
            if fence is not None and fence.start < p:
                closing, fence = _fence_close_and_next(text, fence)
                self._fence = fence
                high = _FAR if fence is None or fence.line_end == -1 else max(high, fence.line_end + 1)
                if closing != -1:
                    if closing > pos:
                        pos = closing
                    continue
                # unclosed: it hides nothing, and no later fence can close either
            if p > 0 and text[p - 1] == "`":
                pos = p + 1
                continue
            if p < self._reasoning_end:
                pos = self._reasoning_end
                continue
            if self._blocks:
                thinking_end = self._in_thinking(p, pos)
                if thinking_end != -1:
                    pos = thinking_end
                    continue
            end = p + self._marker_len if self._marker_len != -1 else self._finder.end  # type: ignore[union-attr]
            self._read = (low, end if end > high else high, before)
            return p

    def settled(self, pos: int) -> bool:
        """True when, for queries from ``pos`` on, whether a marker counts depends only on the character before
        it: no fence can hide one any more (the last was unclosed, or there is none), no reasoning block is about,
        and a lone ``</think>`` is behind. A reader may then treat the search as looking only nearby."""
        return self._clean == -1 and self._fence is None and not self._blocks and pos >= self._reasoning_end

    def local_until(self, start: int, end: int) -> int:
        """How far (at most ``end``) queries from ``start`` (the last answer) look only at the character before
        the marker they find to decide whether it counts: ``end`` when the scanner is :meth:`settled` or no
        marker follows; else, when no fence, backtick or reasoning tag has been met up to ``start``, the first
        one in ``text[start:end]`` (searched at C speed: the caller is about to skip that stretch instead of
        reading it, and skips only what comes before it); else ``start``."""
        finder = self._finder
        if self.settled(start) or finder.exhausted(start):
            return end
        if self._clean == -1 or self._clean < start or start < self._reasoning_end:
            return start
        text = self.text
        low = start - 6 if start > 6 else 0  # a tag that straddles ``start``
        first = end
        for tag in ("`", "~~~", THINK_OPEN, MISTRAL_THINK_OPEN):
            at = text.find(tag, low, first)
            if at != -1:
                first = at
        if first > self._clean:
            self._clean = first  # (known now: the next query need not look there again)
        return first

    def skip_copies(self, pos: int, period: int, copies: int) -> int:
        """How many of the next ``copies`` queries, from ``pos + period``, ``pos + 2 * period``..., would each
        answer one period after the last query (made from ``pos``), now answered without searching.

        When the text the last query read repeats one period on, and the state it left (the next fence) is the
        state before it moved one period on, the next query reads the same text in the same state one period on:
        its answer, and the state it leaves, are the last ones moved one period on. The scanner is left as those
        queries would leave it. 0 (nothing done) when the last query read up to the end of the text, or when
        reasoning blocks are about (their state is not checked here).
        """
        repeats = self.predictable(pos, period, copies)
        if repeats:
            self.advance(period, repeats)
        return repeats

    def predictable(self, pos: int, period: int, copies: int) -> int:
        """How many of the next ``copies`` queries :meth:`skip_copies` would answer (the scanner is unchanged)."""
        low, high, before = self._read
        if self._clean != -1 or self._blocks or high >= _FAR or pos < self._reasoning_end or low < 0:
            return 0
        fence = self._fence
        if (fence is None) != (before is None) or (
            fence is not None
            and before is not None
            and fence != (before.start + period, before.char, before.length, before.line_end + period)
        ):
            return 0  # the next query would not start in the state this one started in, moved one period on
        return min(copies, count_repeats(self.text, low, period, high))

    def advance(self, period: int, repeats: int) -> None:
        """Leave the scanner as ``repeats`` queries that :meth:`predictable` answered would leave it."""
        low, high, before = self._read
        fence = self._fence
        if fence is not None:
            shift = repeats * period
            self._fence = _new_fence(
                _Fence, (fence.start + shift, fence.char, fence.length, fence.line_end + shift)
            )
            before = _new_fence(
                _Fence,
                (fence.start + shift - period, fence.char, fence.length, fence.line_end + shift - period),
            )
        self._finder.forget()  # (its cached answer is one of the skipped queries' past)
        self._read = (low + repeats * period, high + repeats * period, before)


#: what can make a marker an example or deliberation (see :class:`MarkerScanner`); a text without any of them is
#: "plain": there, whether a marker counts depends only on the character before it
CONTEXT_MARKERS = ("```", "~~~", "<think>", "</think>", "[THINK]", "[/THINK]")


def count_repeats(text: str, start: int, period: int, upto: int) -> int:
    """How many copies of ``text[start:upto]`` follow one another at ``start + period``, ``start + 2 * period``...

    A model stuck in a loop writes the same broken call thousands of times. When a failed call's outcome (and the
    search for the next marker) depended only on ``text[start:upto]``, and the next marker is ``period`` further
    on, each copy fails the same way one period later: the parser counts the copies instead of reading each.

    With a window at least one period long, copies 1..c all follow exactly when the text repeats itself one
    period on for ``window + (c - 1) * period`` characters from ``start``: that run is measured by comparing
    doubling stretches at C speed (:func:`_repeat_run`), not by one Python step per copy.
    """
    window = min(upto, len(text)) - start
    if period <= 0 or window < period:
        copies = 0
        at = start + period
        piece = text[start:upto]
        while text.startswith(piece, at):
            at += period
            copies += 1
        return copies
    run = _repeat_run(text, start, period)
    return 0 if run < window else (run - window) // period + 1


def _repeat_run(text: str, start: int, period: int) -> int:
    """The longest ``n`` with ``text[start:start + n] == text[start + period:start + period + n]``."""
    limit = len(text) - start - period
    run, size = 0, 256
    while run < limit:
        size = min(size, limit - run)
        if text.startswith(text[start + run : start + run + size], start + period + run):
            run += size
            size *= 2
        elif size > 16:
            size //= 4
        else:
            while run < limit and text[start + run] == text[start + period + run]:
                run += 1
            return run
    return run


#: how far past the next marker reading a call and getting to that marker may look: the longest marker a reader
#: compares there, with room to spare (see :func:`reading_copies`)
READ_MARGIN = 64


def reading_copies(text: str, mark: int, pos: int, reach: int) -> int:
    """How many copies of the reading from the marker at ``mark`` to the next one at ``pos`` follow at ``pos``.

    A model stuck in a loop writes the same call (or broken call) thousands of times. When reading the call at
    ``mark`` and getting to the marker at ``pos`` looked only at text before ``max(pos, reach) +`` ``READ_MARGIN``
    (``reach``: how far the JSON decoder, and whatever was read after it, went), every copy of that stretch
    repeated at period ``pos - mark`` reads the same way one period later: the caller builds what the reading
    gave (fresh call objects, the same problems) for each copy instead of reading it again. Callers make sure
    their marker search is local (no fences or reasoning blocks) and ``reach`` is finite.
    """
    period = pos - mark
    upto = (pos if pos > reach else reach) + READ_MARGIN
    if upto + period > len(text) or text[upto - 1] != text[upto - 1 + period]:
        return 0  # (a cheap check first: two ordinary calls one after another differ there)
    return count_repeats(text, mark, period, upto)


def local_copies(text: str, mark: int, pos: int, reach: int, scanner: MarkerScanner) -> int:
    """:func:`reading_copies`, kept to the stretch where ``scanner``'s marker search (the reader's, last answered
    at ``pos``) is known to look only nearby: before any fence, backtick or reasoning tag. These are the copies a
    reader builds from its last reading instead of reading each (0 when none). Called once per call read: the
    first comparison in ``reading_copies`` tells two ordinary calls apart at once."""
    copies = reading_copies(text, mark, pos, reach)
    if copies:
        period = pos - mark
        limit = scanner.local_until(pos, pos + copies * period + READ_MARGIN)
        copies = min(copies, (limit - READ_MARGIN - pos) // period)
    return copies if copies > 0 else 0


def confirmed_copies(
    next_start: Callable[[int], int],
    end: int,
    nxt: int,
    period: int,
    copies: int,
    scanner: MarkerScanner | None = None,
) -> tuple[int, int]:
    """How many of ``copies`` (the broken call repeated every ``period``, resuming at ``end``, the next call
    found at ``nxt``) to count, and the next call after them: copy k is counted when the marker search from
    where copy k-1 resumes finds it (a fence or reasoning block may hide it), searched as reading would: in the
    same order, from the same positions (a :class:`MarkerScanner` answer can depend on the queries before it).
    For readers whose reading of a call looks only at the call's own text, never at fences.

    With ``scanner`` (the :class:`MarkerScanner` whose ``next`` is ``next_start``), a run of searches that read
    the same text in the same state one period apart is answered without searching (:meth:`MarkerScanner.skip_copies`).
    """
    counted = 0
    while counted < copies:
        counted += 1
        following = next_start(end + counted * period)
        if following != nxt + counted * period:
            return counted, following
        if scanner is not None and counted < copies:
            counted += scanner.skip_copies(end + counted * period, period, copies - counted)
    return counted, nxt + counted * period
