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

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._json import FAR
from hermes_envs.parsers._scan import (
    CONTEXT_MARKERS,
    confirmed_copies,
    count_repeats,
    local_copies,
)
from hermes_envs.parsers._types import JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    _IDS,
    MAX_ERRORS,
    Finder,
    JsonMemo,
    MarkerScanner,
    ParserError,
    ParseResult,
    Problems,
    ToolCallParser,
    arguments_to_json,
    call_from_object,
    call_parts,
    dumps,
    excerpt,
    finish,
    make_tool_call,
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
        chars = base64.b64encode(_IDS.getrandbits(8 * 2048).to_bytes(2048, "little")).translate(
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
        markers = MarkerScanner(text, TOOL_CALLS)
        first = markers.next(0)
        if first == -1:
            return ParseResult(text, None)
        calls: list[ChatCompletionMessageToolCall] = []
        errors = Problems()
        memo = JsonMemo()
        lists = Finder(text, "[{")
        plain: bool | None = None  # no fences or reasoning blocks (checked once, when first needed)
        index = 0
        pos = first
        n = len(text)
        # the last marker read (see reading_copies): where it was (-1: none), the problems its reading met and the
        # calls it made (name, arguments, the id the text gave or None)
        mark = -1
        problems_at = made_problems = 0
        made: list[tuple[str, str, str | None]] = []
        while pos != -1:
            if mark != -1 and memo.reach < FAR and (len(errors) >= MAX_ERRORS or not made_problems):
                copies = local_copies(text, mark, pos, memo.reach, markers)
                if copies:
                    # copies of the marker just read: each gives the same calls (with fresh ids where the text
                    # gives none) and problems, so they are built, not read again
                    for _ in range(copies):
                        calls.extend(
                            make_tool_call(name, args, given or mistral_call_id())
                            for name, args, given in made
                        )
                    errors.dropped += copies * made_problems
                    index += copies
                    pos += copies * (pos - mark)
            mark = -1
            problems_at = len(errors) + errors.dropped
            memo.reach = 0
            made = []
            index += 1
            body = skip_ws(text, pos + len(TOOL_CALLS))
            following = markers.next(body)  # the next marker bounds this one's payload
            limit = n if following == -1 else following
            end = body  # just after the last JSON read for this marker (body: none was read)
            problem: str | None = None  # why this marker's call could not be read (only built if listed)
            if body >= limit:
                if body >= n:
                    problem = f"the text ends right after {TOOL_CALLS}"
            elif text[body] in "[{":
                value, stop, reason = memo.scan(text, body)
                if reason is not None:
                    if errors.room():
                        problem = f"{reason} at offset {stop}"
                    elif following != -1 and reason.startswith(("Expecting", "Invalid")):
                        # a looping model: the copies of this broken call that follow fail the same way (the
                        # decoder read nothing past the error)
                        period = following - pos
                        copies = count_repeats(text, pos, period, max(stop + 9, following + len(TOOL_CALLS)))
                        if copies and plain is None:
                            plain = not any(m in text for m in CONTEXT_MARKERS)
                        if plain or not copies:
                            following += copies * period
                        else:  # fences or reasoning: the marker search is still made from each copy, as reading
                            copies, following = confirmed_copies(
                                markers.next, body, following, period, copies, markers
                            )
                            body = end = body + copies * period  # (where the last copy's search was made)
                        index += copies
                        errors.dropped += copies
                else:
                    end = stop
                    self._add_items(value, index, calls, errors, made)
            else:
                match = _NAME.match(text, body)
                start = skip_ws(text, match.end()) if match is not None else body
                if match is not None and (start >= limit or text.startswith("</s>", start)):
                    # [TOOL_CALLS]NAME with nothing after it: a call without arguments (v11 templates omit {})
                    end = start
                    calls.append(make_tool_call(match.group(1), "{}", match.group(2) or mistral_call_id()))
                    made.append((match.group(1), "{}", match.group(2) or None))
                elif match is not None and text[start] == "{":
                    value, stop, reason = memo.scan(text, start)
                    if reason is not None:
                        if errors.room():
                            problem = f"{reason} at offset {stop}"
                    else:
                        end = stop
                        try:
                            args = arguments_to_json(value)
                        except ValueError as exc:
                            problem = str(exc)
                        else:
                            call_id = match.group(2) or mistral_call_id()
                            calls.append(make_tool_call(match.group(1), args, call_id))
                            made.append((match.group(1), args, match.group(2) or None))
                else:
                    # pre-v11 output with junk between the marker and the JSON list (vLLM reads the first [{...}])
                    at = lists.find(body)
                    value, stop, reason = (
                        (None, body, "no JSON list") if at == -1 or at >= limit else memo.scan(text, at)
                    )
                    if reason is None and isinstance(value, list):
                        end = stop
                        if errors.room():
                            errors.append(
                                f"tool call #{index} should follow {TOOL_CALLS} directly; got "
                                f"{excerpt(text, body, min(40, at - body))} before it (ignored)."
                            )
                        self._add_items(value, index, calls, errors, made)
                    elif errors.room():
                        problem = f"expected a JSON list or NAME{{ARGS}}; got {excerpt(text, body)}"
            if problem is not None and errors.room():
                errors.append(f"tool call #{index} should be well formed; {problem}.")
            if made:
                mark = pos
                made_problems = len(errors) + errors.dropped - problems_at
            pos = markers.next(end) if following == -1 or following < end else following
            if pos == -1:
                rest = skip_ws(text, end)
                if calls and rest < n and end > body and text[rest:].rstrip() != "</s>":
                    if errors.room():
                        errors.append(
                            f"text after the last tool call should be empty; got {excerpt(text, rest)} (ignored)."
                        )
        if not calls:
            # as vLLM: the payload that could not be read is the content, without the special token
            content = text.replace(TOOL_CALLS, "").strip()
            return ParseResult(content or None, None, errors.final())
        return finish(text, first, calls, errors)

    @staticmethod
    def _add_items(
        value: JSONValue,
        index: int,
        calls: list[ChatCompletionMessageToolCall],
        errors: Problems,
        made: list[tuple[str, str, str | None]],
    ) -> None:
        items = value if isinstance(value, list) else (value,)
        for item_no, item in enumerate(items, 1):
            try:
                name, args = call_from_object(item)
            except ValueError as exc:
                if errors.room():
                    errors.append(f"tool call #{index} (item {item_no}) should be a call object; {exc}.")
                continue
            given = _given_id(item)
            calls.append(make_tool_call(name, args, given or mistral_call_id()))
            made.append((name, args, given))

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
