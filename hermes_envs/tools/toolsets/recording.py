"""The record/replay hook of real tool backends: every call a real backend makes can go through a recorder.

A recorder has two methods: ``lookup(family, operation, request) -> dict | None`` (a recorded response, or None to
make the real call) and ``record(family, operation, request, response)``; it may also have
``failed(family, operation, request, error)``, told when the real call raised (a recording that lost a call should
fail). ``request`` never holds credentials (the backends add keys as headers outside it), so a cassette can store it
after its usual redaction. Install one with :func:`set_tool_recorder`; ``hermes_envs.testing`` installs one that
keeps the calls in the test's cassette (see docs/toolsets.md, "Recording"). While the real call runs,
:func:`in_backend_call` is true in its thread (an HTTP recorder can leave the raw exchange out), and
:func:`current_tool` names the tool being run (for messages).
"""

from __future__ import annotations

import contextvars
import copy
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_envs.errors import HermesEnvsError

__all__ = [
    "JsonlToolRecorder",
    "MemoryToolRecorder",
    "ReplayMissError",
    "ToolRecorder",
    "calling_tool",
    "current_tool",
    "get_tool_recorder",
    "in_backend_call",
    "recorded_call",
    "request_key",
    "set_tool_recorder",
    "tool_recorder",
]


@runtime_checkable
class ToolRecorder(Protocol):
    """What a recorder of real tool-backend calls provides."""

    def lookup(self, family: str, operation: str, request: dict[str, Any]) -> dict[str, Any] | None: ...

    def record(
        self, family: str, operation: str, request: dict[str, Any], response: dict[str, Any]
    ) -> None: ...


class ReplayMissError(HermesEnvsError, LookupError):
    """Replay-only mode met a tool call that was never recorded."""


_lock = threading.Lock()
_recorder: ToolRecorder | None = None
_in_call: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_backend_call", default=False)
_tool: contextvars.ContextVar[str | None] = contextvars.ContextVar("hermes_current_tool", default=None)


def in_backend_call() -> bool:
    """True while a real backend call made through :func:`recorded_call` runs (in that call's thread)."""
    return _in_call.get()


def current_tool() -> str | None:
    """The name of the tool whose handler is running (set by the family tools), or None outside one."""
    return _tool.get()


@contextmanager
def calling_tool(name: str) -> Iterator[None]:
    """Within the block, :func:`current_tool` returns ``name``."""
    token = _tool.set(name)
    try:
        yield
    finally:
        _tool.reset(token)


def set_tool_recorder(recorder: ToolRecorder | None) -> ToolRecorder | None:
    """Install ``recorder`` for every real backend call (None removes it); returns the previous one."""
    global _recorder
    if recorder is not None and not isinstance(recorder, ToolRecorder):
        raise TypeError(
            f"a tool recorder should have lookup() and record() methods; got {type(recorder).__name__}."
        )
    with _lock:
        previous, _recorder = _recorder, recorder
    return previous


def get_tool_recorder() -> ToolRecorder | None:
    return _recorder


@contextmanager
def tool_recorder(recorder: ToolRecorder) -> Iterator[ToolRecorder]:
    """Within the block, real backend calls go through ``recorder``."""
    previous = set_tool_recorder(recorder)
    try:
        yield recorder
    finally:
        set_tool_recorder(previous)


def request_key(family: str, operation: str, request: dict[str, Any]) -> str:
    """A stable text key of one call (sorted JSON), for recorders that match calls exactly."""
    return json.dumps([family, operation, request], sort_keys=True, ensure_ascii=False, default=str)


def recorded_call(
    family: str, operation: str, request: dict[str, Any], call: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """Return the recorded response of this call when the recorder has one, else make it (and record it)."""
    recorder = _recorder
    if recorder is not None:
        hit = recorder.lookup(family, operation, request)
        if hit is not None:
            return copy.deepcopy(hit)
    token = _in_call.set(True)
    try:
        response = call()
    except Exception as exc:
        failed = getattr(recorder, "failed", None)
        if callable(failed):
            failed(family, operation, copy.deepcopy(request), exc)
        raise
    finally:
        _in_call.reset(token)
    if recorder is not None:
        recorder.record(family, operation, copy.deepcopy(request), copy.deepcopy(response))
    return response


class MemoryToolRecorder:
    """Keeps calls in memory; ``replay_only=True`` raises ReplayMissError for a call it never saw."""

    def __init__(self, *, replay_only: bool = False) -> None:
        self.calls: dict[str, dict[str, Any]] = {}
        self.replay_only = replay_only
        self.hits = 0

    def lookup(self, family: str, operation: str, request: dict[str, Any]) -> dict[str, Any] | None:
        key = request_key(family, operation, request)
        if key in self.calls:
            self.hits += 1
            return self.calls[key]
        if self.replay_only:
            raise ReplayMissError(
                f"tool call {family}.{operation} should have been recorded; got a new request {request!r:.200}. "
                "Fix: record again (replay_only=False) with the real backend's key set."
            )
        return None

    def record(self, family: str, operation: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        self.calls[request_key(family, operation, request)] = response


class JsonlToolRecorder(MemoryToolRecorder):
    """A MemoryToolRecorder saved as JSON lines (one ``{"family", "operation", "request", "response"}`` a line)."""

    def __init__(self, path: str | Path, *, replay_only: bool = False) -> None:
        super().__init__(replay_only=replay_only)
        self.path = Path(path)
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.calls[request_key(row["family"], row["operation"], row["request"])] = row["response"]

    def record(self, family: str, operation: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        super().record(family, operation, request, response)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        row = {"family": family, "operation": operation, "request": request, "response": response}
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
