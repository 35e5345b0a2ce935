"""What each fault kind does to an answer: one :class:`FaultEffect` object per kind, holding all its hooks.

The responders never ask which kind a fault is; they call the hooks of ``fault.effect`` at fixed points:

1. :meth:`~FaultEffect.early_reply` before anything is built (a status error, a dropped connection: the reply's
   status, 0 for a drop, is what the call records);
2. :meth:`~FaultEffect.delay` before the answer is sent (latency);
3. :meth:`~FaultEffect.chat_message` / :meth:`~FaultEffect.text_calls` / :meth:`~FaultEffect.text_output` while
   a choice is built (length cuts, broken or unknown tool calls);
4. :meth:`~FaultEffect.choices` on the list of built choices (empty choices);
5. :meth:`~FaultEffect.body_reply` / :meth:`~FaultEffect.stream_reply` on the encoded answer (malformed JSON,
   truncation).

The base class does nothing at every point, so a kind overrides only what it changes. Kinds live in
:data:`FAULT_EFFECTS`, in the order ``FAULT_KINDS`` lists them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._replies import Reply, error_body
from ._tool_call import ToolCall

if TYPE_CHECKING:
    from ._view import RequestView

__all__ = ["FAULT_EFFECTS", "FaultEffect", "NO_FAULT"]

T = TypeVar("T")


class Fault(Protocol):
    """The options a fault carries (:class:`~.faults.Fault` is the one implementation)."""

    code: int | None
    retry_after: float
    seconds: float
    jitter: float
    after_chunks: int
    tool_name: str


_SSE_HEADERS = {"cache-control": "no-cache"}


class FaultEffect:
    """A fault kind: its name and its hooks (the defaults leave the answer as it is)."""

    name = "none"
    turn_times: int | None = 1  # how many requests a turn's fault hits unless it says ``times``
    hides_tool_check = False  # the fault itself calls a tool that was not offered: skip that check

    def check(self, fault: Fault) -> None:
        """Raise ValueError when ``fault``'s options do not fit this kind."""

    def label(self, fault: Fault | None) -> str | None:
        """What :attr:`Call.fault` records."""
        return None if fault is None else self.name

    def early_reply(self, fault: Fault | None) -> Reply | None:
        """A reply that replaces the whole answer (nothing is built), or None."""
        return None

    def delay(self, fault: Fault | None, rng: random.Random) -> float:
        """Seconds to wait before sending the answer."""
        return 0.0

    def chat_message(
        self, fault: Fault, calls: list[ToolCall], content: str | None, finish: str, view: RequestView
    ) -> tuple[list[ToolCall], str | None, str]:
        """A chat choice's (tool calls, content, finish_reason), changed by the fault."""
        return calls, content, finish

    def text_calls(self, fault: Fault | None, calls: list[ToolCall]) -> list[ToolCall]:
        """The tool calls a text route renders."""
        return calls

    breaks_json = False  # text routes: write the tool calls' arguments as invalid JSON

    def text_output(self, fault: Fault | None, text: str, finish: str) -> tuple[str, str]:
        """A text route's rendered (text, finish_reason), changed by the fault."""
        return text, finish

    def choices(self, choices: Sequence[T]) -> list[T]:
        """The choices sent."""
        return list(choices)

    def body_reply(self, fault: Fault | None, body: bytes, delay: float) -> Reply:
        """The reply for an encoded JSON answer."""
        return Reply(body=body, delay=delay)

    def stream_reply(self, fault: Fault | None, events: list[bytes], delay: float) -> Reply:
        """The reply for encoded SSE events (``[DONE]`` not yet added)."""
        return Reply(
            content_type="text/event-stream",
            sse=[*events, b"data: [DONE]\n\n"],
            delay=delay,
            headers=dict(_SSE_HEADERS),
        )


NO_FAULT = FaultEffect()
"""The effect of no fault: every hook leaves the answer alone."""


class Status(FaultEffect):
    """An HTTP error status (429 and 503 with ``Retry-After``) with an OpenAI-style error body."""

    name = "status"
    _MESSAGES = {
        429: ("Rate limit reached (fake server fault).", "rate_limit_exceeded", "requests"),
        500: (
            "The server had an error processing your request (fake server fault).",
            "server_error",
            "server_error",
        ),
        503: ("The server is overloaded (fake server fault).", "server_overloaded", "server_error"),
    }

    def check(self, fault: Fault) -> None:
        if fault.code is None or not 400 <= int(fault.code) <= 599:
            raise ValueError(f"a status fault should have a code between 400 and 599; got {fault.code!r}")

    def label(self, fault: Fault | None) -> str | None:
        return None if fault is None else str(fault.code)

    def early_reply(self, fault: Fault | None) -> Reply | None:
        assert fault is not None
        code = int(fault.code or 500)
        headers = {}
        if code in (429, 503):
            headers = {
                "retry-after": _fmt_seconds(fault.retry_after),
                "retry-after-ms": str(int(fault.retry_after * 1000)),
            }
        msg, err_code, typ = self._MESSAGES.get(
            code, (f"HTTP {code} (fake server fault).", "fault", "server_error")
        )
        return Reply(status=code, body=error_body(msg, err_code, typ), headers=headers)


class Latency(FaultEffect):
    """Sleep ``seconds`` (+ uniform ``jitter``), then answer normally; a turn's latency hits every time."""

    name = "latency"
    turn_times = None

    def delay(self, fault: Fault | None, rng: random.Random) -> float:
        assert fault is not None
        return max(0.0, fault.seconds + (rng.uniform(-fault.jitter, fault.jitter) if fault.jitter else 0.0))


class Drop(FaultEffect):
    """Close the connection without a response."""

    name = "drop"

    def early_reply(self, fault: Fault | None) -> Reply | None:
        return Reply(status=0, drop=True)


class MalformedJson(FaultEffect):
    """A 200 whose body (or one SSE event) is cut in half: not valid JSON."""

    name = "malformed_json"

    def body_reply(self, fault: Fault | None, body: bytes, delay: float) -> Reply:
        return Reply(body=body[: max(1, len(body) // 2)], delay=delay)

    def stream_reply(self, fault: Fault | None, events: list[bytes], delay: float) -> Reply:
        if events:
            mid = len(events) // 2
            events = [*events[:mid], events[mid][: len(events[mid]) // 2] + b"\n\n", *events[mid + 1 :]]
        return super().stream_reply(fault, events, delay)


class TruncatedSse(FaultEffect):
    """Stream ``after_chunks`` events then close without ``[DONE]``; a plain body: half of it, then close."""

    name = "truncated_sse"

    def body_reply(self, fault: Fault | None, body: bytes, delay: float) -> Reply:
        return Reply(body=body[: len(body) // 2], cut=True, declared_length=len(body), delay=delay)

    def stream_reply(self, fault: Fault | None, events: list[bytes], delay: float) -> Reply:
        assert fault is not None
        return Reply(
            content_type="text/event-stream",
            sse=events[: fault.after_chunks],
            cut=True,
            delay=delay,
            headers=dict(_SSE_HEADERS),
        )


class Length(FaultEffect):
    """finish_reason "length", with the last tool call's arguments (or the content, or the text) cut in half."""

    name = "length"

    def chat_message(
        self, fault: Fault, calls: list[ToolCall], content: str | None, finish: str, view: RequestView
    ) -> tuple[list[ToolCall], str | None, str]:
        if calls:
            last = calls[-1]
            calls = [*calls[:-1], replace(last, arguments=last.arguments[: max(1, len(last.arguments) // 2)])]
        elif content:
            content = content[: len(content) // 2]
        return calls, content, "length"

    def text_output(self, fault: Fault | None, text: str, finish: str) -> tuple[str, str]:
        return text[: len(text) // 2], "length"


class EmptyChoices(FaultEffect):
    """A 200 with ``choices: []``."""

    name = "empty_choices"

    def choices(self, choices: Sequence[T]) -> list[T]:
        return []


class InvalidToolJson(FaultEffect):
    """Tool-call arguments that are not valid JSON (a call to the first offered tool when the turn has none)."""

    name = "invalid_tool_json"
    breaks_json = True

    def chat_message(
        self, fault: Fault, calls: list[ToolCall], content: str | None, finish: str, view: RequestView
    ) -> tuple[list[ToolCall], str | None, str]:
        if not calls:
            offered = view.tools_offered
            calls = [ToolCall(offered[0] if offered else "terminal", "{}")]
        return [replace(c, arguments=break_json(c.arguments)) for c in calls], content, "tool_calls"


class UnknownTool(FaultEffect):
    """The (first) tool call names ``tool_name``, a tool that was not offered."""

    name = "unknown_tool"
    hides_tool_check = True

    def _renamed(self, fault: Fault, calls: list[ToolCall]) -> list[ToolCall]:
        if calls:
            return [replace(calls[0], name=fault.tool_name), *calls[1:]]
        return [ToolCall(fault.tool_name, "{}")]

    def chat_message(
        self, fault: Fault, calls: list[ToolCall], content: str | None, finish: str, view: RequestView
    ) -> tuple[list[ToolCall], str | None, str]:
        return self._renamed(fault, calls), content, "tool_calls"

    def text_calls(self, fault: Fault | None, calls: list[ToolCall]) -> list[ToolCall]:
        assert fault is not None
        return self._renamed(fault, calls)


FAULT_EFFECTS: dict[str, FaultEffect] = {
    e.name: e
    for e in (
        Status(),
        Latency(),
        Drop(),
        MalformedJson(),
        TruncatedSse(),
        Length(),
        EmptyChoices(),
        InvalidToolJson(),
        UnknownTool(),
    )
}


def break_json(args: str) -> str:
    """``args`` made invalid JSON (the closing brace dropped), as a model cut off mid-call writes it."""
    return args[:-1] if len(args) > 2 and args.rstrip().endswith("}") else '{"arguments": '


def _fmt_seconds(x: Any) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"
