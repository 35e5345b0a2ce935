"""What the XML-ish reader (:mod:`hermes_envs.parsers.xml_params`) keeps per text, and how a broken call is signalled."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from hermes_envs.parsers._scan import Finder

__all__ = ["TOOL_CALL", "TOOL_CALL_END", "BrokenCall", "XmlScan", "XmlTags", "json_or_text"]

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


class XmlTags(Protocol):
    """What :class:`XmlScan` needs of the reader: its tags, and how it tells a real call start from a mention."""

    value_close: str
    call_close: str
    open_needle: str
    call_needle: str
    bare_start: str | None

    def _real_call_at(self, text: str, at: int) -> bool: ...


def json_or_text(raw: str) -> Any:
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

    def __init__(self, reason: Callable[[], str], resume: int) -> None:
        super().__init__()
        self.reason = reason
        self.resume = resume


class XmlScan:
    """Per-text state: the cached searches shared by every call of one ``parse``."""

    __slots__ = (
        "bound_calls",
        "call_closes",
        "call_ends",
        "closes",
        "later_calls",
        "later_closes",
        "opens",
        "raw",
        "real_bare",
        "real_wrapped",
        "recover_calls",
    )

    def __init__(self, text: str, parser: XmlTags) -> None:
        self.closes = Finder(text, parser.value_close)
        self.later_closes = Finder(text, parser.value_close)
        # a later call start only counts when a function head follows it (not a mere mention of the tag)
        self.later_calls = Finder(text, parser.call_needle, lambda at: parser._real_call_at(text, at))
        self.bound_calls = Finder(text, parser.call_needle, lambda at: parser._real_call_at(text, at))
        self.recover_calls = Finder(text, parser.call_needle, lambda at: parser._real_call_at(text, at))
        # where real calls start (for skipping mentions of the tag in prose): wrapped, and bare (qwen3_coder)
        self.real_wrapped = Finder(text, TOOL_CALL, lambda at: parser._real_call_at(text, at))
        self.real_bare = (
            Finder(text, parser.bare_start, lambda at: parser._real_call_at(text, at))
            if parser.bare_start
            else None
        )
        self.call_ends = Finder(text, TOOL_CALL_END)
        self.call_closes = Finder(text, parser.call_close)
        self.opens = Finder(text, parser.open_needle)
        self.raw = False  # the call being read writes literal backslash-n separators (set per call)
