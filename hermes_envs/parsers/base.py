"""The tool-call parser base class, its result type, the registry, and the scanning helpers every format shares.

Every parser reads model text in one forward pass: markers are found with :class:`Finder` (a cached ``str.find``
whose position never moves backwards) and JSON payloads with an anchored ``raw_decode``, so the time taken grows
linearly with the text even for degenerate output (thousands of unclosed markers, deeply nested brackets).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import random
import re
import sys
import weakref
from collections.abc import Callable, Iterable
from json.encoder import c_make_encoder as _c_make_encoder
from json.encoder import encode_basestring as _encode_basestring
from typing import Any, ClassVar, NamedTuple, TypeVar

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs._definitions import definition_site, where
from hermes_envs.errors import HermesEnvsError

__all__ = [
    "ParseResult",
    "ParserError",
    "ParserRegistrationError",
    "ToolCallParser",
    "UnknownParserError",
    "get_parser",
    "list_parsers",
    "register_parser",
]


# --------------------------------------------------------------------------------------------------- errors


class ParserError(HermesEnvsError, ValueError):
    """``render`` was given tool calls (or content) that the format cannot express."""


class ParserRegistrationError(HermesEnvsError, ValueError):
    """A parser name was registered twice, or ``register_parser`` was misused."""


class UnknownParserError(HermesEnvsError, KeyError):
    """``get_parser`` was asked for a name nobody registered; the message lists the available names."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


# --------------------------------------------------------------------------------------------------- result


@dataclasses.dataclass
class ParseResult:
    """What :meth:`ToolCallParser.parse_detailed` found in a model output.

    ``content`` is the text before the first tool-call marker (trailing whitespace removed; None when empty), or
    the whole text unchanged when no call could be read. ``tool_calls`` is None when no call could be read.
    ``errors`` describes every problem met on the way (a call with invalid JSON, a call cut off by max tokens,
    text that was ignored), one sentence each, so broken calls are reported instead of silently dropped.
    """

    content: str | None
    tool_calls: list[ChatCompletionMessageToolCall] | None = None
    errors: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing went wrong (no errors), whether or not calls were found."""
        return not self.errors


MAX_ERRORS = 50


class Problems(list):
    """The ``errors`` list being built: after :data:`MAX_ERRORS` messages, further ones are only counted.

    Callers write ``if errors.room(): errors.append(...)`` so that degenerate output (thousands of broken
    markers) does not pay for formatting messages nobody will read.
    """

    dropped = 0

    def room(self) -> bool:
        """True while messages are still listed; otherwise counts one more dropped problem."""
        if len(self) < MAX_ERRORS:
            return True
        self.dropped += 1
        return False

    def final(self) -> list[str]:
        out = list(self)
        if self.dropped:
            out.append(f"{self.dropped} more problems of the same kind were not listed.")
        return out


# --------------------------------------------------------------------------------------------------- JSON helpers


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant)
_JSONDecodeError = json.JSONDecodeError
_SCAN = _DECODER.scan_once
_WS = re.compile(r"\s*")


def skip_ws(text: str, pos: int) -> int:
    """Return the first position at or after ``pos`` that is not whitespace (``len(text)`` at most)."""
    n = len(text)
    if pos >= n:
        return n
    if not text[pos].isspace():
        return pos
    pos += 1  # usually a single newline: checked without the regex
    if pos >= n or not text[pos].isspace():
        return pos
    return _WS.match(text, pos).end()


_FIRST_WINDOW = 512


def scan_json_at(text: str, pos: int) -> tuple[Any, int, str | None]:
    """Decode one JSON value starting exactly at ``pos``, without raising.

    Returns ``(value, end, None)`` on success and ``(None, error_position, reason)`` on failure. This is the hot
    path of every JSON format (degenerate output can hold tens of thousands of broken calls), so it neither
    raises nor formats anything; :func:`decode_json_at` is the raising spelling.

    Raw control characters inside strings are accepted (models often write literal newlines in code arguments);
    NaN/Infinity are not (they are not JSON).

    The decoder is run on a window of the text that grows geometrically, never on the whole rest of the text:
    ``json.JSONDecodeError`` counts the newlines from the start of the string it was given, so decoding at
    offset ``pos`` of a long text costs O(pos) per failure, and thousands of broken calls would cost O(n^2).
    A window only grows when its result could differ from the full text's (a value or an error touching the
    window's end, or an unterminated string).
    """
    n = len(text)
    window = _FIRST_WINDOW
    while True:
        end = pos + window
        if end >= n:
            end = n
        chunk = text[pos:end]
        size = end - pos
        try:
            value, stop = _SCAN(chunk, 0)
        except StopIteration as exc:  # what the C scanner raises when a value cannot start (even nested)
            if end == n or exc.value < size - 6:
                return None, pos + exc.value, "Expecting value"
        except _JSONDecodeError as exc:
            if end == n or not (exc.pos >= size - 6 or exc.msg.startswith("Unterminated string")):
                return None, pos + exc.pos, exc.msg
        except (ValueError, RecursionError) as exc:  # NaN/Infinity, or nesting deeper than the C stack allows
            reason = "JSON nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            return None, pos, reason
        else:
            if end == n or stop < size:
                return value, pos + stop, None
        window *= 8


def decode_json_at(text: str, pos: int) -> tuple[Any, int]:
    """Decode one JSON value starting exactly at ``pos``; return it and the position just after it.

    Raises ``ValueError`` with a short reason (see :func:`scan_json_at`, which does not raise).
    """
    value, end, reason = scan_json_at(text, pos)
    if reason is not None:
        raise ValueError(f"{reason} at offset {end}")
    return value, end


_MEMO_KEY_MAX = 256  # longest stretch remembered
_MEMO_LENGTHS = 4  # distinct stretch lengths tried per lookup
_MEMO_SIZE = 1024  # stretches remembered per parse


class JsonMemo:
    """:func:`scan_json_at` that remembers failures, for degenerate output that repeats itself.

    A model stuck in a loop writes the same broken call thousands of times, and the fixed cost of one failed
    decode (the decoder builds its exception object in Python) would then dominate the parse. A failure met
    at offset ``e`` depends only on the text up to a few characters past ``e`` ("Expecting ..." and
    "Invalid ..." errors: the decoder read nothing further), so that stretch is remembered and an identical
    stretch later fails identically, whatever follows it, without running the decoder.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[
            int, dict[str, str]
        ] = {}  # stretch length -> stretch -> reason (error at length - 9)

    def scan(self, text: str, pos: int) -> tuple[Any, int, str | None]:
        seen = self._seen
        for size, failures in seen.items():
            reason = failures.get(text[pos : pos + size])
            if reason is not None:
                return None, pos + size - 9, reason
        value, end, reason = scan_json_at(text, pos)
        if reason is not None and reason.startswith(("Expecting", "Invalid")):
            size = end - pos + 9
            if size <= _MEMO_KEY_MAX and pos + size <= len(text):
                failures = seen.get(size)
                if failures is None and len(seen) < _MEMO_LENGTHS:
                    failures = seen[size] = {}
                if failures is not None and len(failures) < _MEMO_SIZE:
                    failures[text[pos : pos + size]] = reason
        return value, end, reason


def loads_strict(raw: str) -> Any:
    """``json.loads`` with the same rules as :func:`decode_json_at` (whole string, surrounding whitespace allowed)."""
    start = skip_ws(raw, 0)
    value, end = decode_json_at(raw, start)
    if skip_ws(raw, end) != len(raw):
        raise ValueError(f"extra data at offset {end}")
    return value


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False) builds one per call
# The C encoder behind it, called directly: JSONEncoder.encode's Python layers cost more than encoding a small
# call's arguments. No circular-reference bookkeeping (a cycle ends in RecursionError, turned into ValueError).
_C_ENCODE = (
    _c_make_encoder(None, _ENCODER.default, _encode_basestring, None, ": ", ", ", False, False, True)
    if _c_make_encoder is not None
    else None
)


def dumps(value: Any) -> str:
    """The JSON spelling used for ``function.arguments`` and in rendered text (UTF-8 kept as is).

    Same output as ``json.dumps(value, ensure_ascii=False)``; raises ``TypeError`` for values JSON cannot hold
    and ``ValueError`` for circular or too deeply nested ones.
    """
    if _C_ENCODE is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except RecursionError:
        raise ValueError("the value is circular or nested too deeply to write as JSON") from None


def arguments_to_json(value: Any) -> str:
    """Normalise a call's decoded ``arguments`` to a JSON object string; raise ``ValueError`` if impossible.

    Missing/None/empty-string arguments mean ``{}``; a JSON-encoded string is decoded once.
    """
    if value is None:
        return "{}"
    if isinstance(value, str):
        if not value.strip():
            return "{}"
        value = loads_strict(value)
    if not isinstance(value, dict):
        raise ValueError(f"arguments should be a JSON object; got {type(value).__name__} {_short(value)}")
    return dumps(value)


def call_from_object(obj: Any) -> tuple[str, str]:
    """Read ``{"name": ..., "arguments"|"parameters": ...}`` (or OpenAI's ``{"function": {...}}``).

    Returns ``(name, arguments_json)``; raises ``ValueError`` naming what is missing.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"a tool call should be a JSON object; got {type(obj).__name__} {_short(obj)}")
    if "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a tool call should have a non-empty string 'name'; got {_short(name)}")
    args = obj["arguments"] if "arguments" in obj else obj.get("parameters")
    return name.strip(), arguments_to_json(args)


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text) if isinstance(value, str) else text


def excerpt(text: str, pos: int, limit: int = 40) -> str:
    """A short quoted excerpt of ``text`` starting at ``pos``, for error messages."""
    piece = text[pos : pos + limit]
    return repr(piece + ("..." if pos + limit < len(text) else ""))


# --------------------------------------------------------------------------------------------------- tool calls


_IDS = (
    random.Random()
)  # seeded from os.urandom; ids need to be unique, not secret (and urandom per call is slow)


def new_call_id() -> str:
    """A fresh OpenAI-style call id, ``call_`` + 24 hex digits."""
    return f"call_{_IDS.getrandbits(96):024x}"


def make_tool_call(name: str, arguments: str, call_id: str | None = None) -> ChatCompletionMessageToolCall:
    """Build the OpenAI object for one call (``arguments`` already a JSON string)."""
    # one validation of a plain dict is the fastest way in (openai's model_construct is several times slower)
    return ChatCompletionMessageToolCall.model_validate(
        {
            "id": call_id or new_call_id(),
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    )


def call_parts(call: Any) -> tuple[str | None, str, dict[str, Any]]:
    """Accept a ``ChatCompletionMessageToolCall``, an OpenAI-style dict or a ``(name, args)`` pair.

    Returns ``(id or None, name, args dict)``; raises :class:`ParserError` when the call cannot be rendered.
    """
    call_id: Any = None
    if isinstance(call, tuple) and len(call) == 2:
        name, args = call
    elif isinstance(call, dict):
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        call_id = call.get("id")
        name = fn.get("name")
        args = fn["arguments"] if "arguments" in fn else fn.get("parameters")
    else:
        fn = getattr(call, "function", call)
        call_id = getattr(call, "id", None)
        name = getattr(fn, "name", None)
        args = getattr(fn, "arguments", None)
    if not isinstance(name, str) or not name:
        raise ParserError(f"a tool call to render should have a non-empty string name; got {name!r}.")
    try:
        args = json.loads(arguments_to_json(args))
    except ValueError as exc:
        raise ParserError(f"tool call {name!r} to render should have JSON-object arguments; {exc}.") from None
    return (call_id if isinstance(call_id, str) and call_id else None), name, args


# --------------------------------------------------------------------------------------------------- scanning


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


class _Fence(NamedTuple):
    start: int
    char: str
    length: int
    line_end: int  # index of the newline ending the opening line, or -1


def _at_line_start(text: str, i: int) -> bool:
    """True when only up to 3 spaces/tabs separate ``i`` from the start of its line (checked in O(1))."""
    k = i
    while k > 0 and i - k < 3 and text[k - 1] in " \t":
        k -= 1
    return k == 0 or text[k - 1] == "\n"


def _find_fence_open(text: str, pos: int, ticks: Finder, tildes: Finder) -> _Fence | None:
    """The next Markdown fence opening (```` ``` ```` or ``~~~`` at a line start) at or after ``pos``."""
    while True:
        a, b = ticks.find(pos), tildes.find(pos)
        if a == -1 and b == -1:
            return None
        i = b if a == -1 else a if b == -1 else min(a, b)
        char = text[i]
        j = i + 3
        while j < len(text) and text[j] == char:
            j += 1
        if (i == 0 or text[i - 1] != char) and _at_line_start(text, i):
            return _Fence(i, char, j - i, text.find("\n", j))
        pos = j


def _find_fence_close(text: str, fence: _Fence) -> int:
    """End of the line closing ``fence`` (same char, at least as long, nothing else on the line), or -1."""
    if fence.line_end == -1:
        return -1
    mark = fence.char * 3
    pos = fence.line_end + 1
    while True:
        i = text.find(mark, pos)
        if i == -1:
            return -1
        j = i + 3
        while j < len(text) and text[j] == fence.char:
            j += 1
        k = j
        while k < len(text) and text[k] in " \t":
            k += 1
        if (
            j - i >= fence.length
            and (i == 0 or text[i - 1] != fence.char)
            and _at_line_start(text, i)
            and (k == len(text) or text[k] in "\r\n")
        ):
            return k
        pos = j


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
        "_fence",
        "_finder",
        "_reasoning_end",
        "_ticks",
        "_tildes",
        "text",
    )

    def __init__(self, text: str, marker: str) -> None:
        self.text = text
        self._finder = Finder(text, marker)
        self._ticks = Finder(text, "```")
        self._tildes = Finder(text, "~~~")
        self._fence = self._open(0)  # next fence opening not yet passed (None: no more)
        # per reasoning-block syntax: (opening finder, closing finder, opening length, closing length)
        self._blocks = [
            (Finder(text, o), Finder(text, c), len(o), len(c))
            for o, c in ((THINK_OPEN, THINK_CLOSE), (MISTRAL_THINK_OPEN, MISTRAL_THINK_CLOSE))
            if o in text
        ]
        # A `</think>` with no `<think>` before it closes reasoning whose opening tag was in the prompt (Qwen3
        # thinking, DeepSeek-R1/V3.1 templates): everything before it is deliberation, as reasoning parsers read it.
        # Only when a marker follows it (a `</think>` in the arguments of the last call is just text). A `</think>`
        # inside the arguments of an earlier call is read as the end of reasoning too, as a reasoning parser would.
        close = text.find(THINK_CLOSE)
        end = close + len(THINK_CLOSE)
        lone = close != -1 and text.find(THINK_OPEN, 0, close) == -1 and text.find(marker, end) != -1
        self._reasoning_end = end if lone else 0

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
        return _find_fence_open(self.text, pos, self._ticks, self._tildes)

    def next(self, pos: int) -> int:
        text = self.text
        while True:
            p = self._finder.find(pos)
            if p == -1:
                return -1
            fence = self._fence
            if fence is not None and fence.start < pos:
                fence = self._fence = self._open(pos)  # the caller moved past it (a call held it)
            if fence is not None and fence.start < p:
                closing = _find_fence_close(text, fence)
                if closing == -1:
                    self._fence = None  # unclosed: it hides nothing, and no later fence can close either
                else:
                    pos = max(pos, closing)
                    self._fence = self._open(closing)
                    continue
            if p > 0 and text[p - 1] == "`":
                pos = p + 1
                continue
            if p < self._reasoning_end:
                pos = self._reasoning_end
                continue
            thinking_end = self._in_thinking(p, pos)
            if thinking_end != -1:
                pos = thinking_end
                continue
            return p


# --------------------------------------------------------------------------------------------------- base class


class ToolCallParser:
    """Reads tool calls out of a model's raw text, and writes them back in the same format.

    Subclasses implement :meth:`_parse` (returning a :class:`ParseResult`) and :meth:`render`. ``parse`` and
    ``parse_detailed`` never raise: an unexpected failure is reported in ``errors`` and the text is returned as
    content, exactly as if it held no call.
    """

    name: ClassVar[str] = ""

    def parse(
        self, text: str, tools: list[dict[str, Any]] | None = None
    ) -> tuple[str | None, list[ChatCompletionMessageToolCall] | None]:
        """Return ``(content, tool_calls)``; plain text comes back as ``(text, None)`` unchanged."""
        result = self.parse_detailed(text, tools)
        return result.content, result.tool_calls

    def parse_detailed(self, text: str, tools: list[dict[str, Any]] | None = None) -> ParseResult:
        """Like :meth:`parse`, plus the list of problems met (broken or cut-off calls, ignored text)."""
        try:
            result = self._parse(text, tools)
        except Exception as exc:
            return ParseResult(
                text, None, [f"{self.name} parser failed unexpectedly: {type(exc).__name__}: {exc}"]
            )
        return result

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
        raise NotImplementedError

    def render(self, content: str | None, tool_calls: Iterable[Any]) -> str:
        """Return the text the model would emit for ``content`` followed by ``tool_calls``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def finish(
    text: str, first_marker: int, calls: list[ChatCompletionMessageToolCall], errors: list[str]
) -> ParseResult:
    """Build the result: content before the first marker when calls were read, else the whole text."""
    if isinstance(errors, Problems):
        errors = errors.final()
    if not calls:
        return ParseResult(text, None, errors)
    content = text[:first_marker].rstrip()
    return ParseResult(content or None, calls, errors)


def join_content(content: str | None, body: str, separator: str = "\n") -> str:
    """``content`` then ``separator`` then the rendered calls (no separator without content)."""
    return f"{content}{separator}{body}" if content else body


# --------------------------------------------------------------------------------------------------- sections


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

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        """Return ``(name, arguments_json, call_id or None, end)``; raise ValueError with a reason."""
        raise NotImplementedError

    def _parse(self, text: str, tools: list[dict[str, Any]] | None) -> ParseResult:
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
        while True:
            pos = skip_ws(text, pos)
            if pos >= len(text):
                break
            if text.startswith(self.section_end, pos):
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
            end = skip_ws(text, end)
            if text.startswith(self.call_end, end):
                pos = end + len(self.call_end)
            elif end >= len(text):
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
                    else (nxt if nxt != -1 else len(text))
                )
        return finish(text, first, calls, errors)

    def _json_arguments(self, text: str, pos: int, memo: JsonMemo) -> tuple[str, int]:
        pos = skip_ws(text, pos)
        if pos >= len(text):
            raise ValueError("the arguments were cut off (end of text)")
        value, end, reason = memo.scan(text, pos)
        if reason is not None:
            raise ValueError(f"{reason} at offset {end}")
        return arguments_to_json(value), end


# --------------------------------------------------------------------------------------------------- registry

_REGISTRY: dict[str, type[ToolCallParser]] = {}
# Where each registered class was defined: (source file, __qualname__), see hermes_envs._definitions.
_SITES: weakref.WeakKeyDictionary[type, tuple[str, str] | None] = weakref.WeakKeyDictionary()
_P = TypeVar("_P", bound=type[ToolCallParser])


def register_parser(*names: str) -> Callable[[_P], _P]:
    """Class decorator registering a :class:`ToolCallParser` under one or more names.

    The first name becomes ``cls.name`` (unless the class sets one); further names, or stacked decorators, are
    aliases. Registering a name that is taken raises :class:`ParserRegistrationError` naming the owner, unless the
    owner is the same class imported again (same source file and ``__qualname__``, e.g. the env module imported under
    a second name): the newer class then replaces it.
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ParserRegistrationError(
            f"register_parser should be given one or more non-empty names; got {names!r}. "
            'Fix: write @register_parser("my_format").'
        )

    def decorate(cls: _P) -> _P:
        if not (isinstance(cls, type) and issubclass(cls, ToolCallParser)):
            raise ParserRegistrationError(
                f"register_parser should decorate a ToolCallParser subclass; got {cls!r}."
            )
        # A class with no methods of its own, in a module missing from sys.modules, has no file to find: the
        # code applying the decorator is then the class's own module.
        site = _SITES.setdefault(cls, definition_site(cls, sys._getframe(1).f_code.co_filename))
        for n in names:
            owner = _REGISTRY.get(n)
            owner_site = (_SITES.get(owner) or definition_site(owner)) if owner is not None else None
            if owner is None or owner is cls or (site is not None and site == owner_site):
                continue  # free, or the same class imported again (e.g. under a second module name): it replaces
            if site is not None and owner_site is not None and site[0] == owner_site[0]:
                fix = (
                    f"register {n!r} on only one of {owner.__qualname__} and {cls.__qualname__} in that file."
                )
            else:
                fix = "choose another name."
            raise ParserRegistrationError(
                f"parser name {n!r} should be unique; it is already registered by {where(owner)} "
                f"and again by {where(cls)}. Fix: {fix}"
            )
        for n in names:
            _REGISTRY[n] = cls
        if not cls.__dict__.get("name"):
            cls.name = names[0]
        return cls

    return decorate


def get_parser(name: str) -> ToolCallParser:
    """Return a new instance of the parser registered as ``name``; ``KeyError`` lists the known names."""
    cls = _REGISTRY.get(name)
    if cls is None:
        available = list_parsers()
        close = difflib.get_close_matches(str(name), available, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownParserError(
            f"tool-call parser {name!r} should be one of the registered names; got an unknown name.{hint} "
            f"Available: {', '.join(available)}."
        )
    return cls()


def list_parsers() -> list[str]:
    """Every registered name (aliases included), sorted."""
    return sorted(_REGISTRY)
