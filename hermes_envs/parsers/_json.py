"""JSON helpers shared by every format: an anchored decoder that never raises, a failure memo, the encoder.

The decoder is what keeps the JSON formats linear on degenerate output (see :func:`scan_json_at`).
"""

from __future__ import annotations

import json
import json.encoder
import re
from json.encoder import encode_basestring as _encode_basestring
from typing import Any, NoReturn

from hermes_envs.parsers._types import JSONValue

__all__ = [
    "FAR",
    "JsonMemo",
    "arguments_to_json",
    "call_from_object",
    "decode_json_at",
    "dumps",
    "excerpt",
    "loads_strict",
    "scan_json_at",
    "scan_standard",
    "skip_ws",
    "string_arguments",
]


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(strict=False, parse_constant=_reject_constant)
_JSONDecodeError = json.JSONDecodeError
_SCAN = _DECODER.scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, not in typeshed
#: the standard decoder's scanner (raw control characters in strings rejected): a value it reads at ``pos`` is
#: spelled as valid JSON in the text, so that text can be kept as is. Raises on failure (StopIteration,
#: ValueError, RecursionError); its error positions cost O(pos), so callers give up after one failure.
scan_standard = json.JSONDecoder(parse_constant=_reject_constant).scan_once  # type: ignore[attr-defined]
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
    return _WS.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches


_FIRST_WINDOW = 512
_SHORT = 8192  # texts up to this long are decoded without copying a window


def scan_json_at(text: str, pos: int, first_window: int = _FIRST_WINDOW) -> tuple[JSONValue, int, str | None]:
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
    # A short text is decoded in place: a failure then costs at most O(_SHORT) however it fails, and the copy
    # of a window (and a second decode when the first window was too small) is most of a short message's cost.
    window = n if n <= _SHORT else first_window
    while True:
        end = pos + window
        if end >= n:
            end = n
        if end == n and n <= _SHORT:
            chunk, base = text, pos
        else:
            chunk, base = text[pos:end], 0
        size = end - pos
        try:
            value, stop = _SCAN(chunk, base)
            stop -= base
        except StopIteration as exc:  # what the C scanner raises when a value cannot start (even nested)
            if end == n or exc.value < size - 6:
                return None, exc.value + pos - base, "Expecting value"
        except _JSONDecodeError as exc:
            if end == n or not (exc.pos >= size - 6 or exc.msg.startswith("Unterminated string")):
                return None, exc.pos + pos - base, exc.msg
        except (ValueError, RecursionError) as exc:  # NaN/Infinity, or nesting deeper than the C stack allows
            reason = "JSON nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            return None, pos, reason
        else:
            if end == n or stop < size:
                return value, pos + stop, None
        window *= 8


def decode_json_at(text: str, pos: int) -> tuple[JSONValue, int]:
    """Decode one JSON value starting exactly at ``pos``; return it and the position just after it.

    Raises ``ValueError`` with a short reason (see :func:`scan_json_at`, which does not raise).
    """
    value, end, reason = scan_json_at(text, pos)
    if reason is not None:
        raise ValueError(f"{reason} at offset {end}")
    return value, end


#: a :attr:`JsonMemo.reach` past any text: the outcome depended on everything after the scan's start
FAR = 1 << 62
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

    ``reach`` is how far the scans since it was last reset may have read (one past the last character their
    outcome can depend on; :data:`FAR` when an outcome depends on the rest of the text): a reader that repeats
    a call's reading for an identical stretch of text checks that the stretch covers it.
    """

    __slots__ = ("_seen", "_window", "reach")

    def __init__(self) -> None:
        # the decoder's first window: as large as the last value read needed (the calls of one output are alike
        # in size, and a window too small costs a second decode), back to the smallest after a failure
        self._window = _FIRST_WINDOW
        self._seen: dict[
            int, dict[str, str]
        ] = {}  # stretch length -> stretch -> reason (error at length - 9)
        self.reach = 0

    def scan(self, text: str, pos: int) -> tuple[JSONValue, int, str | None]:
        seen = self._seen
        for size, failures in seen.items():
            reason = failures.get(text[pos : pos + size])
            if reason is not None:
                if pos + size > self.reach:
                    self.reach = pos + size
                return None, pos + size - 9, reason
        value, end, reason = scan_json_at(text, pos, self._window)
        if reason is None:
            window = _FIRST_WINDOW
            while window <= end - pos:
                window *= 8
            self._window = window
            if end >= self.reach:  # (a number at the top level was ended by the character after it)
                self.reach = end + 1
            return value, end, reason
        self._window = _FIRST_WINDOW
        if not reason.startswith(("Expecting", "Invalid")):
            self.reach = FAR  # an unterminated string or nesting too deep: decided by the rest of the text
        else:
            if end + 9 > self.reach:
                self.reach = end + 9
            size = end - pos + 9
            if size <= _MEMO_KEY_MAX and pos + size <= len(text):
                memo = seen.get(size)
                if memo is None and len(seen) < _MEMO_LENGTHS:
                    memo = seen[size] = {}
                if memo is not None and len(memo) < _MEMO_SIZE:
                    memo[text[pos : pos + size]] = reason
        return value, end, reason


def loads_strict(raw: str) -> JSONValue:
    """``json.loads`` with the same rules as :func:`decode_json_at` (whole string, surrounding whitespace allowed)."""
    start = skip_ws(raw, 0)
    value, end = decode_json_at(raw, start)
    if skip_ws(raw, end) != len(raw):
        raise ValueError(f"extra data at offset {end}")
    return value


#: The C encoder (a seam, hermes_envs._seams): None on a Python without it, where json.dumps serves.
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_ENCODER = json.JSONEncoder(ensure_ascii=False)  # json.dumps(..., ensure_ascii=False) builds one per call
# The C encoder behind it, called directly: JSONEncoder.encode's Python layers cost more than encoding a small
# call's arguments. No circular-reference bookkeeping (a cycle ends in RecursionError, turned into ValueError).
_C_ENCODE = (
    _c_make_encoder(None, _ENCODER.default, _encode_basestring, None, ": ", ", ", False, False, True)
    if _c_make_encoder is not None
    else None
)


def dumps(value: JSONValue) -> str:
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


def arguments_to_json(value: JSONValue) -> str:
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


def call_from_object(obj: JSONValue) -> tuple[str, str]:
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


def string_arguments(obj: JSONValue) -> tuple[str, str] | None:
    """``(name, arguments_json)`` of a call object whose ``arguments`` is a string that is not a JSON object.

    vLLM's and SGLang's Hermes readers keep such arguments as that string (JSON-encoded); None when ``obj`` is not
    a call with a usable name and string arguments.
    """
    if not isinstance(obj, dict):
        return None
    if "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name, args = obj.get("name"), obj.get("arguments")
    if not isinstance(name, str) or not name.strip() or not isinstance(args, str):
        return None
    return name.strip(), dumps(args)


def _short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text) if isinstance(value, str) else text


def excerpt(text: str, pos: int, limit: int = 40) -> str:
    """A short quoted excerpt of ``text`` starting at ``pos``, for error messages."""
    piece = text[pos : pos + limit]
    return repr(piece + ("..." if pos + limit < len(text) else ""))
