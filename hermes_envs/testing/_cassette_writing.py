"""Writing a recording so that it never lies: count what was sent, keep a line for each failed request, move the
temporary file over the cassette only on success, and keep the old file when nothing but volatile values changed.

Used by :func:`hermes_envs.testing.cassettes.use_cassette` while recording (this module does not import it back).
"""

from __future__ import annotations

import json
from typing import Any

import hermes_envs.testing._cassette_matching as matching
from hermes_envs.tools.toolsets.recording import in_backend_call

__all__ = ["same_recording", "settle_failures", "watch_failures"]


_VOLATILE_RESPONSE_KEYS = frozenset({"id", "created", "system_fingerprint", "request_id", "x_request_id"})


def _stable(value: Any) -> Any:
    """A response body without the values that change on every call (ids, ``created``, UUIDs in strings)."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE_RESPONSE_KEYS}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str):
        return matching._volatile_text(value)
    return value


def _request_text(body: Any) -> Any:
    if isinstance(body, dict) and set(body) == {"json"}:
        return json.dumps(body["json"], ensure_ascii=False, separators=(",", ":"))
    return body


def _comparable(text: str) -> Any:
    import yaml

    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    meta = dict(data.get("metadata") or {})
    hermes = {k: v for k, v in (meta.get("hermes") or {}).items() if k not in ("recorded", "base_url")}
    out = []
    for it in data.get("interactions") or []:
        req, resp = it.get("request") or {}, it.get("response") or {}
        body = _request_text(req.get("body"))
        out.append(
            (
                str(req.get("method", "")).upper(),
                matching.endpoint(str(req.get("uri", ""))),
                matching.body_key(body.encode("utf-8") if isinstance(body, str) else body),
                (resp.get("status") or {}).get("code"),
                json.dumps(_stable((resp.get("body") or {}).get("string")), sort_keys=True, default=str),
            )
        )
    out.sort(
        key=repr
    )  # concurrent rollouts finish in any order: the same exchanges in another order are the same
    tools = sorted(
        json.dumps(
            [it.get("family"), it.get("operation"), _stable(it.get("request")), _stable(it.get("response"))],
            sort_keys=True,
            default=str,
        )
        for it in data.get("tool_calls") or []
    )
    return hermes, out, tools


def same_recording(old_text: str, new_text: str) -> bool:
    """True when two cassette texts hold the same requests and replies (and the same real tool-backend calls),
    ignoring what changes on every recording: host and port, dates, request headers, response ids and ``created``,
    tool-call ids, UUIDs, the order of concurrent calls."""
    try:
        return bool(_comparable(old_text) == _comparable(new_text))
    except Exception:  # an unreadable file is not "the same": the new recording replaces it
        return False


def watch_failures(cassette: Any, session: Any, redactor: Any) -> None:
    """Count the requests sent while recording and keep a line for each answered with an HTTP error.

    A failed answer is not written to the cassette: it waits, keyed by the request (method, endpoint, normalized
    body). When the client sends the same request again and it succeeds (a 429 or 5xx the client retried), the
    failure is forgotten and only the success is kept; what never succeeded fails the recording at the end
    (:func:`settle_failures`)."""
    can_play = cassette.can_play_response_for
    append = cassette.append
    session.pending_failures = {}

    def counting_can_play(request: Any) -> Any:
        ok = can_play(request)
        if not ok and not in_backend_call():  # a tool backend's own HTTP is counted as a tool call
            session.attempted += 1
        return ok

    def key_of(request: Any) -> tuple[str, str, str]:
        return (str(request.method).upper(), matching.endpoint(request.uri), matching.body_key(request.body))

    def checking_append(request: Any, response: Any) -> None:
        status = int((response.get("status") or {}).get("code", 200))
        key = key_of(request)
        if status >= 400:
            body = (response.get("body") or {}).get("string")
            if isinstance(body, bytes):
                body = body.decode("utf-8", errors="replace")
            detail = " ".join(redactor.text(str(body or "")).split())[:160]
            line = f"{request.method} {redactor.url(request.uri)}: HTTP {status} {detail}"
            session.pending_failures.setdefault(key, []).append(line)
            session.answered_failures += 1
            return
        retried = session.pending_failures.pop(key, None)
        if retried:
            session.retried += len(retried)
        append(request, response)

    cassette.can_play_response_for = counting_can_play
    cassette.append = checking_append


def settle_failures(session: Any) -> None:
    """At the end of a recording: the failed answers no retry made good become the recording's failures."""
    for lines in (getattr(session, "pending_failures", None) or {}).values():
        session.failures.extend(lines)
    session.pending_failures = {}
