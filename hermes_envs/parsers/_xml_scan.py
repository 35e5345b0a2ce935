"""What the XML-ish reader (:mod:`hermes_envs.parsers.xml_params`) keeps per text, and how a broken call is signalled."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Protocol

from hermes_envs.parsers._errors import ParserError
from hermes_envs.parsers._scan import CharsFinder, Finder
from hermes_envs.parsers._types import JSONValue

__all__ = [
    "TOOL_CALL",
    "TOOL_CALL_END",
    "LOOKAHEAD",
    "BrokenCall",
    "RealStarts",
    "Starts",
    "XmlScan",
    "XmlTags",
    "check_name",
    "json_or_text",
]

#: how far past the next call start reading a call (and the pattern checks at what its searches found: a function
#: name is read to 256 characters) may have looked: the margin of the copies a reading builds or counts
LOOKAHEAD = 256

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


class XmlTags(Protocol):
    """What :class:`XmlScan` needs of the reader: its tags, and how it tells a real call start from a mention."""

    # read-only: the readers declare them as class variables
    @property
    def value_close(self) -> str: ...
    @property
    def call_close(self) -> str: ...
    @property
    def open_needle(self) -> str: ...
    @property
    def call_needle(self) -> str: ...
    @property
    def bare_start(self) -> str | None: ...
    @property
    def name_ends(self) -> str | None: ...

    def real_call_at(self, text: str, at: int, scan: XmlScan | None = None) -> bool: ...

    def real_starts(self, text: str, needle: str) -> Starts: ...


class Starts(Protocol):
    """A forward search (:class:`~hermes_envs.parsers._scan.Finder`'s contract): the next position >= ``pos``."""

    def find(self, pos: int) -> int: ...

    @property
    def needle(self) -> str: ...

    @property
    def found(self) -> int:
        """The last query's answer (-1: none, or no query yet)."""
        ...


def json_or_text(raw: str) -> JSONValue:
    """``raw`` decoded as JSON (surrounding whitespace ignored) when it is valid JSON, else ``raw`` verbatim."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


class BrokenCall(Exception):
    """One call could not be read; ``resume`` is where scanning continues.

    The reason is a callable, formatted only while the error list has room: degenerate output holds tens of
    thousands of broken calls, and building each message (with its excerpt) would cost more than reading them.
    """

    # (``Callable[..., str]``: the reasons are lambdas binding their values as defaults, called with no argument)
    def __init__(self, reason: Callable[..., str], resume: int, local: bool = False, seen: int = -1) -> None:
        super().__init__()
        self.reason = reason
        self.resume = resume
        # True when the failure depended only on the text from the call to ``resume`` (no value was read: those
        # searches look far ahead), or to ``seen`` when that is further, so an identical copy fails the same way
        self.local = local
        self.seen = seen


class RealStarts:
    """Where real calls start (:class:`~hermes_envs.parsers._scan.Finder`'s contract): the next ``needle`` at or
    after ``pos`` at which ``pattern`` (which starts with ``needle``) matches.

    The first candidate is found by ``str.find`` and checked by the pattern anchored there (the usual text: a
    call where the marker is); past one that fails, the regex engine searches on (degenerate text: thousands of
    mentions, skipped at C speed instead of one Python check each). With ``name_ends``, a match of the pattern's
    group ``long`` is a name longer than the pattern reads: it counts when the first of ``name_ends`` after it is
    ``>`` (one cached forward search: every opening in a stretch without one shares that answer).
    """

    __slots__ = ("_at", "_ends", "_from", "name_ends", "needle", "pattern", "text")

    def __init__(
        self, text: str, needle: str, pattern: re.Pattern[str], name_ends: str | None = None
    ) -> None:
        self.text = text
        self.needle = needle
        self.pattern = pattern
        self.name_ends = name_ends
        self._ends: CharsFinder | None = None
        self._from = -1
        self._at = -1

    def find(self, pos: int) -> int:
        if 0 <= self._from <= pos and (self._at == -1 or self._at >= pos):
            return self._at
        self._from = pos
        text, pattern = self.text, self.pattern
        at = text.find(self.needle, pos)
        while at != -1:
            match = pattern.match(text, at) or pattern.search(text, at + 1)
            if match is None:
                at = -1
                break
            at = match.start()
            if self.name_ends is None or match.group("long") is None:
                break
            if self._ends is None:
                self._ends = CharsFinder(text, self.name_ends)
            end = self._ends.find(match.end())
            if end != -1 and text[end] == ">":
                break
            # no opening before that end has a name that ends with ">" either
            at = -1 if end == -1 else text.find(self.needle, end + 1)
        self._at = at
        return at

    @property
    def found(self) -> int:
        """The last query's answer (-1: none, or no query yet)."""
        return self._at


class XmlScan:
    """Per-text state: the cached searches shared by every call of one ``parse``.

    The searches that only unusual text needs (a broken call, a mention of the tag, a value holding a tag) are
    made when first used: most texts are short messages with a call or two, where setting them up would cost more
    than the reading."""

    __slots__ = (
        "_bound",
        "_name_ends",
        "_real_bare",
        "_real_wrapped",
        "_recover",
        "call_closes",
        "call_ends",
        "closes",
        "later_calls",
        "later_closes",
        "opens",
        "parser",
        "raw",
        "text",
    )

    def __init__(self, text: str, parser: XmlTags) -> None:
        self.text = text
        self.parser = parser
        self.closes = Finder(text, parser.value_close)
        self.later_closes = Finder(text, parser.value_close)
        # a later call start only counts when a function head follows it (not a mere mention of the tag)
        self.later_calls = parser.real_starts(text, parser.call_needle)
        self.call_ends = Finder(text, TOOL_CALL_END)
        self.call_closes = Finder(text, parser.call_close)
        self.opens = Finder(text, parser.open_needle)
        self._bound: Starts | None = None
        self._recover: Starts | None = None
        self._real_wrapped: Starts | None = None
        self._real_bare: Starts | None = None
        self._name_ends: CharsFinder | None = None
        self.raw = False  # the call being read writes literal backslash-n separators (set per call)

    @property
    def bound_calls(self) -> Starts:
        """Real call starts, searched from each value that holds a tag (where a forgotten closing tag may be)."""
        if self._bound is None:
            self._bound = self.parser.real_starts(self.text, self.parser.call_needle)
        return self._bound

    @property
    def recover_calls(self) -> Starts:
        """Real call starts, searched from each broken call (where reading goes on)."""
        if self._recover is None:
            self._recover = self.parser.real_starts(self.text, self.parser.call_needle)
        return self._recover

    @property
    def real_wrapped(self) -> Starts:
        """Where real ``<tool_call>`` calls start (for skipping mentions of the tag in prose)."""
        if self._real_wrapped is None:
            self._real_wrapped = self.parser.real_starts(self.text, TOOL_CALL)
        return self._real_wrapped

    @property
    def real_bare(self) -> Starts | None:
        """Where real bare calls start (qwen3_coder's ``<function=``), or None for a format without them."""
        if self._real_bare is None and self.parser.bare_start:
            self._real_bare = self.parser.real_starts(self.text, self.parser.bare_start)
        return self._real_bare

    @property
    def name_ends(self) -> CharsFinder | None:
        """Where the name after each function or parameter opening ends (see XmlParamsParser._opening_at)."""
        if self._name_ends is None and self.parser.name_ends is not None:
            self._name_ends = CharsFinder(self.text, self.parser.name_ends)
        return self._name_ends

    def seen(self, pos: int) -> int:
        """How far the cached searches have looked past ``pos``: the end of the furthest occurrence any of them
        holds (a search that found nothing looked to the end of the text, and finds nothing from later either).
        Reads the searches' last answers (``found``)."""
        far = pos
        for search in (
            self.closes,
            self.later_closes,
            self.later_calls,
            self._bound,
            self._recover,
            self._real_wrapped,
            self._real_bare,
            self.call_ends,
            self.call_closes,
            self.opens,
        ):
            if search is not None and search.found >= far:
                far = search.found + len(search.needle)
        return far


def check_name(parser: str, what: str, value: str, forbidden: str, spaces: bool = True) -> None:
    """Raise :class:`ParserError` unless ``value`` can be written as a name in an XML-ish call."""
    bad = any(c in forbidden or (not spaces and c.isspace()) for c in value)
    if not value or bad or value != value.strip():
        raise ParserError(
            f"a {parser} {what} should be non-empty, without {forbidden!r}"
            f"{'' if spaces else ' or whitespace'} or outer spaces; got {value!r}."
        )
