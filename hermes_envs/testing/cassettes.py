"""Cassettes: real provider episodes recorded once (vcrpy), replayed offline with LLM-aware matching.

* :func:`use_cassette` — record or replay every HTTP request made inside the block (httpx2 / openai 3.x, httpx,
  aiohttp, requests ... whatever vcrpy patches). Replay by default (record mode ``none``): a request the cassette
  does not hold raises :class:`CassetteMissError` naming the host, the nearest recorded request's differing fields
  and the flag that records; it is also kept in :attr:`CassetteSession.misses` (clients often swallow errors).
* Matching: method + endpoint + normalized JSON body (:mod:`hermes_envs.testing._cassette_matching`).
* Secrets: :class:`~hermes_envs.testing._redaction.Redactor` scrubs what is written; the lint runs on what is
  written and on what is read.
* Readable files: JSON bodies are stored as YAML structures and SSE bodies as one entry per event (``sse:``), so a
  review shows the messages, tool calls and each streamed chunk; they are turned back into bytes on replay.
* Re-recording over a cassette produces a drift summary (:attr:`CassetteSession.drift`).
* Recording never lies: it is written to a temporary file beside the cassette and moved over it (atomically) only
  when every request got a successful answer. A request answered with HTTP >= 400, or one that never got an answer
  (connection refused, timeout), fails the recording (:attr:`CassetteSession.failures`) and leaves the previous
  cassette untouched.
* Real tool-backend calls (web_search on Tavily, ...) made in the block are kept in the same file, in its
  ``tool_calls:`` section, and answered from it on replay (:mod:`hermes_envs.testing._tool_cassette`).
* :func:`cassette_responder` — a recorded cassette as a fake-server policy ``(request_body) -> turn``, so the
  conformance probes (and :class:`FakeOpenAIServer`) can answer with a real model's replies.

Record modes are vcrpy's (``none``, ``once``, ``new_episodes``, ``all``) plus pytest-recording's ``rewrite``
(delete, then record everything again).

This module holds the session (:func:`use_cassette`, :class:`CassetteSession`, miss messages, the responder) and is
where users import cassettes from; the parts live beside it: the file format and reading in
:mod:`~hermes_envs.testing._cassette_format`, drift in :mod:`~hermes_envs.testing._cassette_drift`, matching in
:mod:`~hermes_envs.testing._cassette_matching`, failure counting and no-op re-records in
:mod:`~hermes_envs.testing._cassette_writing`, redaction, lint.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import hermes_envs.testing._cassette_matching as matching
from hermes_envs.testing._cassette_drift import drift_summary
from hermes_envs.testing._cassette_format import (
    RECORD_FLAG,
    CassetteError,
    CassetteMissError,
    HermesYamlSerializer,
    Interaction,
    load_cassette,
    parse_yaml,
    reply_of,
)

__all__ = [
    "RECORD_FLAG",
    "RECORD_MODES",
    "CassetteError",
    "CassetteMissError",
    "CassetteSession",
    "Interaction",
    "cassette_responder",
    "drift_summary",
    "load_cassette",
    "reply_of",
    "use_cassette",
]

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
_SERIALIZER = "hermes-yaml"


# ================================================================================================ the session
@dataclass
class CassetteSession:
    """What happened in a :func:`use_cassette` block: misses, what was recorded, drift, lint findings."""

    path: Path
    record_mode: str
    old: list[Interaction] = field(default_factory=list)
    #: The ``hermes:`` metadata of the cassette as it was on disk (env, class, model ... of its recording).
    old_metadata: dict[str, Any] = field(default_factory=dict)
    #: What this run is (``env``, ``class``), to say when a cassette was recorded for another env.
    running: dict[str, Any] = field(default_factory=dict)
    #: Raise misses as one line pointing at the full text in :attr:`misses` (whose owner reports them once).
    brief_misses: bool = False
    new: list[Interaction] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)
    findings: list[Any] = field(default_factory=list)
    played: int = 0
    recorded: int = 0
    cassette: Any = None
    #: Requests that failed while recording (HTTP >= 400, or no answer at all); any makes the recording fail.
    failures: list[str] = field(default_factory=list)
    #: Requests sent to the provider while recording, answered or not.
    attempted: int = 0
    #: Requests answered with HTTP >= 400 while recording (not written; a failure unless a retry succeeded).
    answered_failures: int = 0
    #: Failed answers made good by the client's retry of the same request (a 429, then a 200): not failures.
    retried: int = 0
    pending_failures: dict[Any, list[str]] = field(default_factory=dict)
    #: A re-recording that only differed in volatile values (ports, dates, ids, ``created``): the file was kept.
    unchanged: bool = False
    #: Real tool-backend calls answered from the cassette / recorded into it / that raised while recording.
    tool_calls_played: int = 0
    tool_calls_recorded: int = 0
    tool_calls_failed: int = 0

    @property
    def recording(self) -> bool:
        return self.record_mode != "none"

    def failure_message(self) -> str:
        """Why the recording failed, and that the previous cassette was kept (empty when it did not fail)."""
        if not self.failures:
            return ""
        counts = Counter(self.failures)
        shown = "\n".join(f"  - {f}" + (f" (x{n})" if n > 1 else "") for f, n in list(counts.items())[:5])
        more = f"\n  ... and {len(counts) - 5} other failure(s)" if len(counts) > 5 else ""
        return (
            f"recording {self.path} should get a successful answer to every request; {len(self.failures)} of "
            f"{self.attempted} request(s) failed:\n{shown}{more}\n"
            f"The cassette was not written{' (the previous one is untouched)' if self.path.exists() else ''}. Fix: check "
            "the provider's base URL, that it is up, and the API key variable (--hermes-api-key-env / "
            "--openai.api_key-env), then record again."
        )

    def assert_ok(self) -> None:
        """Raise :class:`CassetteError` for a failed recording or secrets found, :class:`CassetteMissError` for
        misses."""
        if self.failures:
            raise CassetteError(self.failure_message())
        if self.misses:
            body = "\n\n".join(f"[{i + 1}] {m}" for i, m in enumerate(self.misses))
            raise CassetteMissError(f"{len(self.misses)} request(s) were not in the cassette:\n\n{body}")
        if self.findings:
            raise CassetteError("secret lint failed:\n" + "\n".join(str(f) for f in self.findings))


def _build_vcr(record_mode: str, redactor: Any) -> Any:
    import vcr

    from hermes_envs.tools.toolsets.recording import in_backend_call

    def before_record_request(request: Any) -> Any:
        # A real tool backend's own HTTP exchange is kept as a tool call (tool_calls:), not as an interaction.
        return None if in_backend_call() else redactor.request(request)

    v = vcr.VCR(
        serializer=_SERIALIZER,
        record_mode=record_mode,
        match_on=("llm_endpoint", "llm_body"),
        before_record_request=before_record_request,
        before_record_response=redactor.response,
        decode_compressed_response=True,
    )
    v.register_serializer(_SERIALIZER, _SerializerAdapter)
    v.register_matcher("llm_endpoint", matching.llm_endpoint_matcher)
    v.register_matcher("llm_body", matching.llm_body_matcher)
    return v


class _SerializerAdapter:
    serialize = staticmethod(HermesYamlSerializer.serialize)
    deserialize = staticmethod(HermesYamlSerializer.deserialize)


def miss_message(
    method: str,
    url: str,
    body: Any,
    path: Path,
    old: list[Interaction],
    mode: str,
    recorded_for: dict[str, Any] | None = None,
    running: dict[str, Any] | None = None,
) -> str:
    """The explanation of a replay miss: the request, its host, the nearest recording's differences, the fix (and,
    when the cassette's metadata names another env than the one running, that first)."""
    host = urlsplit(url).hostname or "?"
    internal = host.endswith(
        ".invalid"
    )  # the replay placeholder host: not something to show or record against
    shown = f"{method} {matching.endpoint(url)}" if internal else f"{method} {url} (host {host})"
    lines = [
        f"request {shown} should be in cassette {path}; it is not, and record mode {mode!r} sends nothing to "
        "the network."
    ]
    other = _other_env(recorded_for or {}, running or {})
    if other:
        lines.append(other)
    if not old:
        lines.append("The cassette is empty or missing.")
    else:
        near = matching.nearest(method, url, body, [(i.method, i.uri, i.raw_request) for i in old])
        if near is not None:
            index, diffs = near
            if diffs:
                lines.append(f"Nearest recorded request (#{index + 1} of {len(old)}) differs in:")
                lines.extend(f"  - {d}" for d in diffs)
            else:
                lines.append(
                    f"Recorded request #{index + 1} matches, but all its recorded replies were used up "
                    "(the env sent it more often than when recording)."
                )
    target = "your provider (--hermes-base-url URL --hermes-model NAME)" if internal else host
    lines.append(
        f"Fix: record it with `{RECORD_FLAG}` (or `hermes-envs record ...`) against {target}, or make the env "
        "deterministic (seeded item order, no time or random values in prompts)."
    )
    return "\n".join(lines)


def _other_env(recorded_for: dict[str, Any], running: dict[str, Any]) -> str:
    """A line saying the cassette was recorded for another env than the one running (empty when it was not)."""
    differs = [
        k
        for k in ("env", "class")
        if recorded_for.get(k) and running.get(k) and recorded_for[k] != running[k]
    ]
    if not differs:
        return ""
    theirs = " ".join(f"{k} {recorded_for[k]!r}" for k in ("env", "class") if recorded_for.get(k))
    ours = " ".join(f"{k} {running[k]!r}" for k in ("env", "class") if running.get(k))
    return (
        f"This cassette was recorded for {theirs} (its hermes: metadata); this run is {ours}. Fix: point the run at "
        "its own cassette (--cassette / the test's cassette name), or record one for this env."
    )


@contextlib.contextmanager
def use_cassette(
    path: str | Path,
    record_mode: str = "none",
    *,
    secrets: Iterable[str] = (),
    metadata: dict[str, Any] | None = None,
    block_network: bool | None = None,
    lint: bool = True,
    brief_misses: bool = False,
) -> Iterator[CassetteSession]:
    """Record or replay the HTTP traffic of the block in the cassette at ``path`` (see the module docstring).

    ``secrets``: extra values to scrub (the provider key is scrubbed by header anyway). ``metadata``: stored in the
    cassette when recording (``hermes:`` section). ``block_network``: refuse connections beyond loopback (default:
    on when replaying). ``lint``: run the secret lint on the cassette after recording and before replay.
    ``brief_misses``: a miss raises a one-line :class:`CassetteMissError` pointing at :attr:`CassetteSession.misses`
    (for callers that report the session's misses themselves, so the clients' and env's logs of the exception do
    not repeat the whole explanation).
    """
    from hermes_envs.testing._redaction import Redactor
    from hermes_envs.testing._secret_lint import lint_paths

    if record_mode not in RECORD_MODES:
        raise CassetteError(f"record mode should be one of {', '.join(RECORD_MODES)}; got {record_mode!r}.")
    p = Path(path)
    secrets = list(secrets)
    session = CassetteSession(path=p, record_mode=record_mode, brief_misses=brief_misses)
    if metadata:
        session.running = {k: metadata.get(k) for k in ("env", "class")}
    if p.exists():
        session.old, stored = load_cassette(p)
        session.old_metadata = dict(stored.get("hermes") or {})
        if lint and record_mode != "rewrite":
            session.findings = lint_paths([p], secrets)
            if session.findings:
                session.assert_ok()
    vcr_mode = "all" if record_mode == "rewrite" else record_mode
    p.parent.mkdir(parents=True, exist_ok=True)
    # Recording goes to a temporary file in the same folder (so the final os.replace is atomic); it replaces the
    # cassette only when the block ends cleanly and every request was answered.
    target = p
    if session.recording:
        target = p.with_name(f".{p.stem}.recording-{os.getpid()}{p.suffix}")
        target.unlink(missing_ok=True)
        if record_mode != "rewrite" and p.exists():
            target.write_bytes(p.read_bytes())
    redactor = Redactor(secrets)
    guard: Any = contextlib.nullcontext()
    if block_network or (block_network is None and record_mode == "none"):
        from hermes_envs.testing.offline import block_network as _block

        guard = _block()
    from hermes_envs.testing._cassette_writing import watch_failures
    from hermes_envs.testing._tool_cassette import TOOL_CALLS_KEY, CassetteToolRecorder
    from hermes_envs.tools.toolsets.recording import set_tool_recorder

    completed = False
    try:
        with guard, _build_vcr(vcr_mode, redactor).use_cassette(str(target)) as cassette:
            session.cassette = cassette
            _watch_misses(cassette, session)
            if session.recording:
                watch_failures(cassette, session, redactor)
            if metadata and vcr_mode != "none":
                cassette.get_metadata("hermes", metadata)
            tools = CassetteToolRecorder(
                session,
                redactor,
                replay=vcr_mode != "all",
                record=not cassette.write_protected,
                record_flag=RECORD_FLAG,
            )
            if cassette.write_protected:
                if p.exists():
                    tools.load(list(parse_yaml(p.read_text(encoding="utf-8")).get(TOOL_CALLS_KEY) or []))
            else:  # the list vcrpy saves with the cassette (the calls already in it, on a new-episodes run)
                tools.load(cassette.get_metadata(TOOL_CALLS_KEY, []))
            previous = set_tool_recorder(tools)
            try:
                yield session
            finally:
                set_tool_recorder(previous)
                session.played = cassette.play_count
                session.recorded = len(cassette.data) - cassette._loaded_count if vcr_mode != "none" else 0
                session.tool_calls_played, session.tool_calls_recorded = tools.played, tools.recorded
        completed = True
    finally:
        if session.recording:
            _finish_recording(session, target, completed, secrets, lint)


def _finish_recording(
    session: CassetteSession, target: Path, completed: bool, secrets: list[str], lint: bool
) -> None:
    """Move a successful recording over the cassette; drop a failed one (the old cassette stays as it was)."""
    from hermes_envs.testing._cassette_writing import same_recording, settle_failures
    from hermes_envs.testing._secret_lint import lint_text

    settle_failures(session)
    unanswered = session.attempted - session.recorded - session.tool_calls_failed - session.answered_failures
    if unanswered > 0:
        session.failures.append(
            f"{unanswered} request(s) got no answer (connection refused, reset or timed out)"
        )
    try:
        if not target.exists():
            return
        text = target.read_text(encoding="utf-8")
        if lint:
            session.findings = lint_text(text, str(session.path), secrets)
        if not completed or session.failures or session.findings:
            return
        session.new = load_cassette(target)[0]
        if session.old:
            session.drift = drift_summary(session.old, session.new)
        if session.path.exists():
            from hermes_envs.testing._tool_cassette import TOOL_CALLS_KEY, tool_call_drift

            session.drift += tool_call_drift(
                parse_yaml(session.path.read_text(encoding="utf-8")).get(TOOL_CALLS_KEY) or [],
                parse_yaml(text).get(TOOL_CALLS_KEY) or [],
            )
        if session.path.exists() and same_recording(session.path.read_text(encoding="utf-8"), text):
            session.unchanged = True  # keep the file byte for byte: a re-record without drift is a no-op diff
            return
        os.replace(target, session.path)
    finally:
        target.unlink(missing_ok=True)


def _watch_misses(cassette: Any, session: CassetteSession) -> None:
    """Turn vcrpy's write-protected miss into a :class:`CassetteMissError` with our explanation (and keep it)."""
    original = cassette.can_play_response_for

    def can_play_response_for(request: Any) -> Any:
        ok = original(request)
        if not ok and cassette.write_protected:
            message = miss_message(
                request.method,
                request.uri,
                request.body,
                session.path,
                session.old,
                session.record_mode,
                session.old_metadata,
                session.running,
            )
            if message in session.misses:  # the client's retry of the same request: listed once
                index = session.misses.index(message) + 1
                raise CassetteMissError(
                    f"the same request again: miss [{index}] of {session.path} (see above)."
                )
            session.misses.append(message)
            if session.brief_misses:
                raise CassetteMissError(
                    f"{message.splitlines()[0]} (miss [{len(session.misses)}]: the nearest recorded request and the "
                    "fix are listed once, at the end of the run)"
                )
            raise CassetteMissError(message)
        return ok

    cassette.can_play_response_for = can_play_response_for


# ================================================================================================ responder
def cassette_responder(
    path: str | Path | Iterable[str | Path], *, strict: bool = True, endpoint: str = "chat/completions"
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A recorded cassette (or several) as a fake-server policy / conformance responder.

    ``responder(request_body) -> turn`` answers with the recorded reply whose request matches ``request_body``
    (LLM-aware matching; identical requests get their recorded replies in turn, cycling). With ``strict=False`` a
    request that matches nothing gets the reply of the nearest recorded request — a real model's reply shapes
    (``content: null`` with tool calls, reasoning fields, odd formatting) for probes the recording never saw.
    Use as ``FakeOpenAIServer(policy=cassette_responder(path))`` or hand it to the conformance kit.
    """
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    recorded: list[tuple[Interaction, dict[str, Any]]] = []
    for p in paths:
        for it in load_cassette(p)[0]:
            if it.endpoint != endpoint or it.status >= 400:
                continue
            turn = reply_of(it.response)
            if turn is not None:
                recorded.append((it, turn))
    if not recorded:
        raise CassetteError(
            f"cassette(s) {', '.join(map(str, paths))} should hold {endpoint} replies; found none."
        )
    by_key: dict[str, list[int]] = defaultdict(list)
    for i, (it, _) in enumerate(recorded):
        by_key[matching.body_key(it.raw_request)].append(i)
    served: Counter[str] = Counter()

    def _turn(index: int) -> dict[str, Any]:
        turn = dict(recorded[index][1])
        turn.pop("usage", None)
        if not turn.get("reasoning_content"):
            turn.pop("reasoning_content", None)
        if not turn.get("finish_reason"):
            turn.pop("finish_reason", None)
        turn["tool_calls"] = [{k: v for k, v in tc.items() if v is not None} for tc in turn["tool_calls"]]
        return turn

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        raw = json.dumps(body)
        key = matching.body_key(raw)
        hits = by_key.get(key)
        if hits:
            index = hits[served[key] % len(hits)]
            served[key] += 1
            return _turn(index)
        near = matching.nearest(
            "POST", endpoint, raw, [(it.method, it.uri, it.raw_request) for it, _ in recorded]
        )
        assert near is not None
        if strict:
            diffs = "\n".join(f"  - {d}" for d in near[1])
            raise CassetteMissError(
                f"request should match a recorded {endpoint} request; nearest (#{near[0] + 1}) differs in:\n{diffs}"
            )
        return _turn(near[0])

    responder.__name__ = responder.__qualname__ = "cassette_responder"
    return responder
