"""Real tool-backend calls (web_search, web_extract, image_generate ...) kept in the test's cassette, beside the model
traffic: :class:`CassetteToolRecorder` implements the tools' recorder interface
(:mod:`hermes_envs.tools.toolsets.recording`) on a :func:`~hermes_envs.testing.cassettes.use_cassette` session.

* Recording: every real backend call is stored, redacted by the cassette's :class:`Redactor`, in the cassette's
  ``tool_calls:`` section as ``{family, operation, tool, request, response}``; the raw HTTP exchange of that call
  (with its key in a header or the body) is left out of ``interactions``. A call that raises fails the recording
  like a failed model request (the cassette is then not written).
* Replay: a recorded call is answered from the cassette (identical calls in recorded order), with no network and
  no key; a call that was never recorded raises :class:`ToolCassetteMissError` naming the tool, its arguments and
  the command that records it, and is kept in the session's misses (the agent loop turns a tool's exception into a
  tool error, so the test fails on the session instead).
* Matching: family, operation and the request with UUIDs and sandbox paths normalised (as for model requests).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from typing import Any

import hermes_envs.testing._cassette_matching as matching
from hermes_envs.tools.toolsets.recording import ReplayMissError, current_tool

__all__ = [
    "TOOL_CALLS_KEY",
    "CassetteToolRecorder",
    "ToolCassetteMissError",
    "sort_entries",
    "tool_call_drift",
    "tool_call_key",
]

#: The cassette section (top-level key) that holds the recorded tool calls.
TOOL_CALLS_KEY = "tool_calls"


class ToolCassetteMissError(ReplayMissError):
    """A real tool-backend call made during replay is not in the cassette (nothing was sent)."""


def _normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _normalised(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(v) for v in value]
    if isinstance(value, str):
        return matching._volatile_text(value)
    return value


def tool_call_key(family: str, operation: str, request: Any) -> str:
    """The matching key of one tool call: family, operation and the normalised request as sorted JSON."""
    return json.dumps(
        [family, operation, _normalised(request)], sort_keys=True, ensure_ascii=False, default=str
    )


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries in a stable order (by call; identical calls keep their recorded order), so concurrent rollouts
    that made the same calls in another order write the same file."""
    return sorted(
        entries,
        key=lambda e: tool_call_key(str(e.get("family")), str(e.get("operation")), e.get("request")),
    )


def tool_call_drift(old: list[dict[str, Any]], new: list[dict[str, Any]], limit: int = 8) -> list[str]:
    """What changed in the recorded tool calls between two recordings, one line per change (empty: no drift)."""

    def by_call(entries: list[dict[str, Any]]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for e in entries:
            key = tool_call_key(str(e.get("family")), str(e.get("operation")), e.get("request"))
            out[key].append(json.dumps(_normalised(e.get("response")), sort_keys=True, default=str))
        return out

    a, b = by_call(old), by_call(new)
    lines = [f"tool calls: {len(old)} -> {len(new)}"] if len(old) != len(new) else []
    changes = []
    for key in sorted(set(a) | set(b)):
        if sorted(a.get(key, [])) == sorted(b.get(key, [])):
            continue
        family, operation, request = json.loads(key)
        where = f"tool call {family}.{operation} {json.dumps(request, ensure_ascii=False)[:80]}"
        if key not in a:
            changes.append(f"{where}: new")
        elif key not in b:
            changes.append(f"{where}: no longer made")
        else:
            changes.append(f"{where}: answer changed")
    lines.extend(changes[:limit])
    if len(changes) > limit:
        lines.append(f"... and {len(changes) - limit} more changed tool call(s)")
    return lines


class CassetteToolRecorder:
    """The tools' recorder on one cassette session (installed by ``use_cassette`` for its block)."""

    def __init__(
        self, session: Any, redactor: Any, *, replay: bool, record: bool, record_flag: str = "--hermes-record"
    ) -> None:
        """``replay``: answer calls the cassette holds; ``record``: make and store the calls it does not hold;
        ``record_flag``: the command named in a miss."""
        self.record_flag = record_flag
        self.session = session
        self.redactor = redactor
        self.replay = replay
        self.record_new = record
        self.entries: list[
            dict[str, Any]
        ] = []  # what the cassette will hold (the list saved in its metadata)
        self._recorded: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._served: dict[str, int] = defaultdict(int)
        self._replaced: set[str] = set()
        self._lock = threading.Lock()
        self.played = 0
        self.recorded = 0

    def load(self, entries: list[dict[str, Any]]) -> None:
        """Take the calls already in the cassette (answered on replay, kept when recording new episodes)."""
        self.entries = entries
        for entry in entries:
            key = tool_call_key(str(entry.get("family")), str(entry.get("operation")), entry.get("request"))
            self._recorded[key].append(entry)

    # ------------------------------------------------------------------------------------- recorder protocol
    def lookup(self, family: str, operation: str, request: dict[str, Any]) -> dict[str, Any] | None:
        key = tool_call_key(family, operation, self.redactor.value(request))
        with self._lock:
            hits = self._recorded.get(key) if self.replay else None
            if hits and (self._served[key] < len(hits) or not self.record_new):
                entry = hits[self._served[key] % len(hits)]
                self._served[key] += 1
                self.played += 1
                return dict(entry.get("response") or {})
            if self.record_new:
                return None
            message = self.miss_message(family, operation, request)
            self.session.misses.append(message)
        raise ToolCassetteMissError(message)

    def record(self, family: str, operation: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        entry: dict[str, Any] = {"family": family, "operation": operation}
        tool = current_tool()
        if tool:
            entry["tool"] = tool
        entry["request"] = self.redactor.value(request)
        entry["response"] = self.redactor.value(response)
        key = tool_call_key(family, operation, entry["request"])
        with self._lock:
            if not self.replay and key in self._recorded and key not in self._replaced:
                # re-recording everything (mode "all"): the new answer replaces the old ones of the same call
                self.entries[:] = [
                    e
                    for e in self.entries
                    if tool_call_key(str(e.get("family")), str(e.get("operation")), e.get("request")) != key
                ]
                self._replaced.add(key)
            self.entries.append(entry)
            self.recorded += 1
            cassette = getattr(self.session, "cassette", None)
            if cassette is not None:
                cassette.dirty = True

    def failed(self, family: str, operation: str, request: dict[str, Any], error: BaseException) -> None:
        """A real call raised while recording: the recording fails (the previous cassette is kept)."""
        if not self.record_new:
            return
        detail = " ".join(self.redactor.text(str(error)).split())[:200]
        with self._lock:
            self.session.attempted += 1
            self.session.tool_calls_failed += 1
            self.session.failures.append(
                f"tool call {self._label(family, operation)} {self._args(request)}: {detail}"
            )

    # ------------------------------------------------------------------------------------------- messages
    def _label(self, family: str, operation: str) -> str:
        tool = current_tool()
        return f"{tool} ({family}.{operation})" if tool else f"{family}.{operation}"

    def _args(self, request: dict[str, Any]) -> str:
        shown = {k: v for k, v in self.redactor.value(request).items() if k != "backend"}
        return json.dumps(shown, ensure_ascii=False, default=str)[:300]

    def miss_message(self, family: str, operation: str, request: dict[str, Any]) -> str:
        """Why a tool call was refused on replay: the tool, its arguments, what the cassette holds, the fix."""
        backend = request.get("backend", "?")
        same_op = [e for e in self.entries if e.get("family") == family and e.get("operation") == operation]
        lines = [
            f"tool call {self._label(family, operation)} with arguments {self._args(request)} (backend {backend!r}) "
            f"should be in cassette {self.session.path}; it is not, and replay sends nothing to the network.",
            f"The cassette holds {len(same_op)} recorded {family}.{operation} call(s)"
            + (
                f", e.g. {json.dumps(same_op[0].get('request'), ensure_ascii=False)[:200]}."
                if same_op
                else "."
            ),
            f"Fix: record it with `{self.record_flag}` (or `hermes-envs record ...`) with the {backend} backend's key set "
            f"(HERMES_{family.upper()}_BACKEND={backend}), or make the env's tool calls deterministic.",
        ]
        return "\n".join(lines)
