"""What makes two LLM requests "the same" for cassette replay, and how a miss is explained.

Two requests match when they have the same method, the same **endpoint** (the path after the provider's ``/v1``
prefix, so ``/api/v1/chat/completions`` on OpenRouter and ``/v1/chat/completions`` on vLLM are both
``chat/completions``; scheme, host and port are ignored) and the same **normalized JSON body**.

Normalizing keeps everything that changes what a model answers — ``messages``, ``tools``, ``tool_choice``, ``model``,
the sampling parameters (``temperature``, ``top_p``, ``max_tokens`` ...), ``stream``, ``n``, ``stop``,
``response_format``, ``extra_body`` fields — and drops or rewrites what varies from run to run without changing the
answer:

* top-level fields in :data:`VOLATILE_FIELDS` (``user``, ``seed``, ``stream_options``, ``metadata``, ``store`` ...);
* tool-call ids (``tool_calls[].id``, ``tool_call_id``): replaced by their order of appearance in the request;
* UUIDs inside strings (task ids, temp-folder names in tool output): replaced by ``<uuid>``;
* key order of JSON objects, and tool-call ``arguments`` strings (compared as parsed JSON when they parse).

Bodies that are not JSON are compared as bytes. :func:`diff_bodies` names the first fields that differ, e.g.
``messages[3].content: 'Answer: 41' != 'Answer: 42'``; :func:`nearest` picks the recorded request closest to a miss.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from hermes_envs._text import short_repr

__all__ = [
    "VOLATILE_FIELDS",
    "diff_bodies",
    "endpoint",
    "llm_body_matcher",
    "llm_endpoint_matcher",
    "nearest",
    "normalize_body",
    "parse_body",
]

#: Top-level request fields ignored when matching (they vary per run and do not change the answer).
VOLATILE_FIELDS: frozenset[str] = frozenset(
    {
        "user",
        "seed",
        "stream_options",
        "metadata",
        "store",
        "service_tier",
        "request_id",
        "prompt_cache_key",
        "safety_identifier",
    }
)

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# A task's sandbox folder (random temp names: <tmp>/hermes-envs-XXXX/<task>-YYYY) shows up in tool output
# (tracebacks, pwd, ls); it differs on every run, so it is compared as a placeholder.
_SANDBOX = re.compile(r"[^\s'\"()]*?/hermes-envs-[A-Za-z0-9_]+(?:/[^/\s'\"():,]+)?")
_MISSING = object()


def _volatile_text(text: str) -> str:
    return _SANDBOX.sub("<sandbox>", _UUID.sub("<uuid>", text))


def endpoint(url_or_path: str) -> str:
    """The provider-independent endpoint of a URL or path: what follows the last ``/v1/`` (else the path)."""
    path = urlsplit(url_or_path).path if "://" in url_or_path else url_or_path.split("?", 1)[0]
    path = path.rstrip("/")
    marker = path.rfind("/v1/")
    if marker >= 0:
        return path[marker + 4 :]
    return path.lstrip("/")


def parse_body(body: Any) -> Any:
    """The JSON value of a request body (bytes / str / None); the raw bytes when it is not JSON."""
    if body is None:
        return None
    if isinstance(body, (bytes, bytearray, memoryview)):
        raw = bytes(body)
    elif isinstance(body, str):
        raw = body.encode("utf-8")
    else:
        return body
    return _parse_cached(raw)


@functools.lru_cache(maxsize=4096)
def _parse_cached(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return raw


def normalize_body(body: Any, ignore: Iterable[str] = VOLATILE_FIELDS) -> Any:
    """The comparable form of a request body (see the module docstring for what is dropped or rewritten)."""
    value = parse_body(body)
    if not isinstance(value, dict):
        return value
    ignored = frozenset(ignore)
    ids: dict[str, str] = {}
    out = {k: _normalize(v, ids, key=k) for k, v in value.items() if k not in ignored}
    return out


def _normalize(value: Any, ids: dict[str, str], key: str = "") -> Any:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in ("tool_call_id",) or (k == "id" and key == "tool_calls"):
                out[k] = ids.setdefault(str(v), f"<id{len(ids) + 1}>")
            elif k == "arguments" and isinstance(v, str):
                try:
                    out[k] = _normalize(json.loads(v), ids)
                except ValueError:
                    out[k] = _volatile_text(v)
            else:
                out[k] = _normalize(v, ids, key=k)
        return out
    if isinstance(value, list):
        return [_normalize(v, ids, key=key) for v in value]
    if isinstance(value, str):
        return _volatile_text(value)
    return value


@functools.lru_cache(maxsize=4096)
def _normalized_key(raw: bytes | None) -> str:
    value = normalize_body(raw)
    if isinstance(value, (bytes, bytearray)):
        return "bytes:" + bytes(value).hex()
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def body_key(body: Any) -> str:
    """A string equal for two bodies exactly when they match (cached: cheap to call for every recorded request)."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    return _normalized_key(bytes(body) if body is not None else None)


# ----------------------------------------------------------------------------------------------- diffs
def _short(value: Any, n: int = 90) -> str:
    return short_repr(value, n)


def _diff(a: Any, b: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{k}" if path else str(k)
            av, bv = a.get(k, _MISSING), b.get(k, _MISSING)
            if av is _MISSING:
                out.append(f"{sub}: absent here, recorded {_short(bv)}")
            elif bv is _MISSING:
                out.append(f"{sub}: {_short(av)} here, absent from the recording")
            else:
                _diff(av, bv, sub, out, limit)
            if len(out) >= limit:
                return
        return
    if isinstance(a, list) and isinstance(b, list):
        for i, (av, bv) in enumerate(zip(a, b)):
            _diff(av, bv, f"{path}[{i}]", out, limit)
            if len(out) >= limit:
                return
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} entries here, {len(b)} recorded")
        return
    if isinstance(a, str) and isinstance(b, str):
        out.append(f"{path or 'body'}: {_string_diff(a, b)}")
        return
    out.append(f"{path or 'body'}: {_short(a)} here, recorded {_short(b)}")


def _string_diff(a: str, b: str, width: int = 80) -> str:
    """Two strings shown around their first difference (an edit past the first 90 characters is visible)."""
    at = len(os.path.commonprefix([a, b]))
    if len(a) <= width and len(b) <= width:
        return f"{a!r} here, recorded {b!r}"
    start = max(0, at - width // 3)

    def cut(s: str) -> str:
        piece = s[start : start + width]
        return ("…" if start else "") + repr(piece) + ("…" if start + width < len(s) else "")

    return f"{cut(a)} here, recorded {cut(b)} (they differ from character {at + 1} of {len(a)} / {len(b)})"


def diff_bodies(body: Any, recorded: Any, limit: int = 5) -> list[str]:
    """The first ``limit`` differences between a request body and a recorded one, after normalization."""
    out: list[str] = []
    _diff(normalize_body(body), normalize_body(recorded), "", out, limit)
    return out


def _similarity(a: Any, b: Any) -> float:
    """0..1: how alike two values read (difflib's ratio of their JSON, first 2,000 characters)."""
    import difflib

    ta = json.dumps(a, sort_keys=True, ensure_ascii=False, default=str)[:2000]
    tb = json.dumps(b, sort_keys=True, ensure_ascii=False, default=str)[:2000]
    return difflib.SequenceMatcher(None, ta, tb, autojunk=False).ratio()


def _score(a: Any, b: Any) -> float:
    """How alike two normalized bodies are (bigger is closer): shared fields, the shared message prefix, and how
    alike the first differing message reads (so a one-word edit beats another item's prompt)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return 1.0 if a == b else 0.0
    score: float = sum(2 for k in a if k in b and a[k] == b[k])
    ma, mb = a.get("messages"), b.get("messages")
    if isinstance(ma, list) and isinstance(mb, list):
        for x, y in zip(ma, mb):
            if x != y:
                score += 2.9 * _similarity(x, y)  # below one more shared message (3)
                break
            score += 3
        score -= abs(len(ma) - len(mb))
    return score


def nearest(
    method: str, url: str, body: Any, recorded: Sequence[tuple[str, str, Any]]
) -> tuple[int, list[str]] | None:
    """Index of the recorded ``(method, url, body)`` closest to a request, and what differs; None if none."""
    if not recorded:
        return None
    want = normalize_body(body)
    target = endpoint(url)
    best: tuple[float, int] | None = None
    for i, (m, u, b) in enumerate(recorded):
        score = _score(want, normalize_body(b))
        score += 100 if endpoint(u) == target else 0
        score += 10 if m.upper() == method.upper() else 0
        if best is None or score > best[0]:
            best = (score, i)
    assert best is not None
    i = best[1]
    m, u, b = recorded[i]
    diffs = []
    if m.upper() != method.upper():
        diffs.append(f"method: {method} here, recorded {m}")
    if endpoint(u) != target:
        diffs.append(f"endpoint: {target!r} here, recorded {endpoint(u)!r}")
    diffs.extend(diff_bodies(body, b))
    return i, diffs


# ----------------------------------------------------------------------------------------------- vcrpy matchers
def llm_endpoint_matcher(r1: Any, r2: Any) -> None:
    """vcrpy matcher: same method and endpoint (raises AssertionError naming the difference)."""
    if r1.method.upper() != r2.method.upper():
        raise AssertionError(f"method: {r1.method} != {r2.method}")
    e1, e2 = endpoint(r1.uri), endpoint(r2.uri)
    if e1 != e2:
        raise AssertionError(f"endpoint: {e1!r} != {e2!r}")


def llm_body_matcher(r1: Any, r2: Any) -> None:
    """vcrpy matcher: same normalized JSON body.

    vcrpy runs matchers against every recorded request, so a mismatch only says so; the field-by-field explanation
    is computed once, on a real miss, against the nearest recorded request (:func:`nearest`)."""
    if body_key(r1.body) != body_key(r2.body):
        raise AssertionError("normalized JSON bodies differ")
