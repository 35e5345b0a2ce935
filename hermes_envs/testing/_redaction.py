"""Keep secrets out of cassettes: headers, query parameters and bodies are scrubbed before anything is written.

By default (:class:`Redactor`):

* request and response headers in :data:`SECRET_HEADERS` (``Authorization``, ``api-key``, ``x-api-key``,
  ``OpenAI-Organization``, ``OpenAI-Project``, ``Cookie``, ``Set-Cookie`` ...) keep their name and get the value
  ``REDACTED`` (``Bearer REDACTED`` for a bearer token) — replaced, not dropped, so a reviewer sees they were sent;
* query parameters whose name looks key-like (``key``, ``api_key``, ``token``, ``sig`` ...) become ``REDACTED``;
* request and response bodies: every known secret value (the client's key, the current value of each
  ``*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variable, and their base64 forms) and every credential
  :mod:`hermes_envs.testing.secret_rules` recognises (key shapes, no environment variable needed; base64 and
  percent-encoded forms; PEM blocks) is replaced by ``REDACTED``;
* JSON bodies are also redacted value by value after decoding (so ``\u002d``-style escapes hide nothing, and a
  value stored under a credential's name such as ``"SecretAccessKey"`` goes), and SSE bodies on the reassembled
  stream: a key streamed across two chunks is found once the chunks are joined, and its pieces are replaced.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hermes_envs.testing._secret_lint import secret_values_from_env
from hermes_envs.testing.secret_rules import (
    encoded_forms,
    looks_real,
    redact_text,
    scan,
    secret_name,
    sse_events,
)

__all__ = ["PLACEHOLDER", "SECRET_HEADERS", "SECRET_QUERY", "Redactor", "redact_message"]

PLACEHOLDER = "REDACTED"

#: Header names (lower case) whose values never reach a cassette.
SECRET_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "openai-organization",
        "openai-project",
        "cookie",
        "set-cookie",
        "x-auth-token",
        "x-amz-security-token",
    }
)

#: Query parameter names that look like credentials (matched case-insensitively, whole name).
SECRET_QUERY = re.compile(
    r"^(?:.*[_-])?(?:key|apikey|api[_-]?key|token|access[_-]?token|secret|sig|signature|password|passwd|auth|code)$",
    re.IGNORECASE,
)


class Redactor:
    """Scrubs vcrpy requests and responses (``before_record_request`` / ``before_record_response``)."""

    def __init__(
        self,
        secrets: Iterable[str] = (),
        *,
        headers: Iterable[str] = SECRET_HEADERS,
        placeholder: str = PLACEHOLDER,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.placeholder = placeholder
        self.headers = frozenset(h.lower() for h in headers)
        values = {s for s in secrets if s and len(s) >= 6}
        values |= set(secret_values_from_env(os.environ if environ is None else environ))
        values |= {form for v in list(values) for form in encoded_forms(v)}
        # longest first, so a key that contains another is replaced whole
        self.secrets = sorted(values, key=len, reverse=True)

    # ------------------------------------------------------------------------------------------ pieces
    def secret_header(self, name: str) -> bool:
        """A header whose value never reaches a cassette: listed, or named like a credential (``X-Portkey-Api-Key``,
        ``X-Session-Key``)."""
        return name.lower() in self.headers or secret_name(name)

    def header_value(self, name: str, value: str) -> str:
        if name.lower() in ("authorization", "proxy-authorization"):
            scheme, _, rest = str(value).partition(" ")
            if rest and scheme.isalpha():
                return f"{scheme} {self.placeholder}"
        return self.placeholder

    def text(self, text: str) -> str:
        """``text`` with known secret values and credentials (plain or encoded) replaced."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, self.placeholder)
        return redact_text(text, self.placeholder)

    def body(self, body: Any) -> Any:
        if body is None:
            return None
        if isinstance(body, (bytes, bytearray)):
            try:
                decoded = bytes(body).decode("utf-8")
            except UnicodeDecodeError:
                return body
            scrubbed = self._body_text(decoded)
            return body if scrubbed == decoded else scrubbed.encode("utf-8")
        if isinstance(body, str):
            return self._body_text(body)
        return body

    def value(self, value: Any) -> Any:
        """A JSON value (a tool call's request or response) with every string redacted, as in JSON bodies."""
        return self._json_value(json.loads(json.dumps(value, default=str)))

    def _body_text(self, text: str) -> str:
        events = sse_events(text)
        if events is not None:  # the joined stream first: a piece alone may not look like a key
            return self.text(self._sse(text, events))
        text = self.text(text)
        stripped = text.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                value = json.loads(text)
            except ValueError:
                return text
            scrubbed = self._json_value(value)
            if scrubbed != value:
                return json.dumps(scrubbed, ensure_ascii=False, separators=(",", ":"))
        return text

    def _json_value(self, value: Any, key: str = "") -> Any:
        """A JSON value with strings redacted after decoding, strings held under a credential's name (``token``,
        ``accessKey`` ...) dropped, and JSON held in a string (tool-call ``arguments``) redacted the same way."""
        if isinstance(value, dict):
            return {k: self._json_value(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._json_value(v, key) for v in value]
        if isinstance(value, str):
            if len(value) >= 16 and secret_name(key) and looks_real(value, "keyword"):
                return self.placeholder
            if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
                try:
                    inner = json.loads(value)
                except ValueError:
                    inner = None
                if isinstance(inner, (dict, list)):
                    scrubbed = self._json_value(inner, key)
                    if scrubbed != inner:
                        return json.dumps(scrubbed, ensure_ascii=False)
            return self.text(value)
        return value

    def _sse(self, text: str, parsed: list[tuple[list[str], Any]]) -> str:
        """An SSE body redacted event by event and on the reassembled stream (pieces of a split key replaced).

        ``parsed``: :func:`~hermes_envs.testing.secret_rules.sse_events` of ``text`` (any spelling: ``data:`` without
        the space, ``event:`` / ``id:`` lines, CRLF)."""
        events: list[Any] = [value if isinstance(value, (dict, list)) else None for _, value in parsed]
        pieces: dict[tuple[Any, ...], list[tuple[Any, Any]]] = {}

        def walk(value: Any, path: tuple[Any, ...]) -> None:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            index = value.get("index") if isinstance(value, dict) else None
            for k, v in items:
                sub = (*path, index, k) if isinstance(value, dict) and index is not None else (*path, k)
                if isinstance(value, list):
                    sub = path
                if isinstance(v, str):
                    pieces.setdefault(sub, []).append((value, k))
                elif isinstance(v, (dict, list)):
                    walk(v, sub)

        for event in events:
            if event is not None:
                walk(event, ())
        changed = False
        for refs in pieces.values():
            if len(refs) < 2:
                continue
            joined = "".join(container[k] for container, k in refs)
            known = [(joined.find(s), len(s)) for s in self.secrets if s in joined]
            spans = [(h.start, h.end) for h in scan(joined)] + [(a, a + n) for a, n in known]
            if not spans:
                continue
            changed = True
            offset = 0
            for container, k in refs:
                piece = container[k]
                lo, hi = offset, offset + len(piece)
                offset = hi
                out = []
                for i, ch in enumerate(piece, start=lo):
                    inside = [(a, b) for a, b in spans if a <= i < b]
                    if not inside:
                        out.append(ch)
                    elif i == inside[0][0]:  # the placeholder goes where the secret started
                        out.append(self.placeholder)
                container[k] = "".join(out)
        if not changed:
            return text
        rebuilt = [
            "\n".join([*other, "data: " + json.dumps(e, ensure_ascii=False, separators=(",", ":"))])
            if e is not None
            else "\n".join(other)
            for (other, _), e in zip(parsed, events)
        ]
        return "\n\n".join(rebuilt) + "\n\n"

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        userinfo_free = parts.netloc.rsplit("@", 1)[-1]
        netloc = f"{self.placeholder}@{userinfo_free}" if "@" in parts.netloc else parts.netloc
        if not parts.query and netloc == parts.netloc:
            return url
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode(
            [
                (k, self.placeholder if SECRET_QUERY.match(k) or secret_name(k) else self.text(v))
                for k, v in pairs
            ]
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    # ------------------------------------------------------------------------------------------ vcrpy hooks
    def request(self, request: Any) -> Any:
        """vcrpy ``before_record_request``: scrub headers, URL and body of a ``vcr.request.Request``."""
        for name in list(request.headers.keys()):
            if self.secret_header(name):
                request.headers[name] = self.header_value(name, request.headers[name])
            else:
                value = request.headers[name]
                if isinstance(value, str):
                    request.headers[name] = self.text(value)
        request.uri = self.url(request.uri)
        body = request.body
        if isinstance(body, (bytes, bytearray, str)):
            request.body = self.body(body)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """vcrpy ``before_record_response``: scrub headers and body of a recorded response dict."""
        headers = response.get("headers") or {}
        for name in list(headers):
            values = headers[name]
            many = isinstance(values, list)
            items = values if many else [values]
            if self.secret_header(name):
                items = [self.header_value(name, v) for v in items]
            else:
                items = [self.text(v) if isinstance(v, str) else v for v in items]
            headers[name] = items if many else items[0]
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = self.body(body["string"])
        return response


_MESSAGE_REDACTORS: dict[tuple[str, ...], Redactor] = {}


def redact_message(text: str) -> str:
    """``text`` (a finding, an exception message) with the recording redaction applied: the current values of
    secret-named environment variables (``*_API_KEY``, ``*_PASSWORD`` ...) and every credential shape replaced by
    ``REDACTED``. For what the kit writes to the terminal and to reports: an env's error text can hold a key."""
    if not text:
        return text
    values = tuple(sorted(secret_values_from_env(os.environ)))
    redactor = _MESSAGE_REDACTORS.get(values)
    if redactor is None:
        _MESSAGE_REDACTORS.clear()  # one entry: the environment as it is now
        redactor = _MESSAGE_REDACTORS[values] = Redactor(environ=os.environ)
    return redactor.text(text)
