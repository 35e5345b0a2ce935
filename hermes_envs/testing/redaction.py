"""Keep secrets out of cassettes: headers, query parameters and bodies are scrubbed before anything is written.

By default (:class:`Redactor`):

* request and response headers in :data:`SECRET_HEADERS` (``Authorization``, ``api-key``, ``x-api-key``,
  ``OpenAI-Organization``, ``OpenAI-Project``, ``Cookie``, ``Set-Cookie`` ...) keep their name and get the value
  ``REDACTED`` (``Bearer REDACTED`` for a bearer token) — replaced, not dropped, so a reviewer sees they were sent;
* query parameters whose name looks key-like (``key``, ``api_key``, ``token``, ``sig`` ...) become ``REDACTED``;
* request and response bodies: every known secret value (the client's key, the current value of each
  ``*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variable) and every string shaped like a provider key
  (:data:`hermes_envs.testing.secret_lint.KEY_PATTERNS`) is replaced by ``REDACTED``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hermes_envs.testing.secret_lint import KEY_PATTERNS, secret_values_from_env

__all__ = ["PLACEHOLDER", "SECRET_HEADERS", "SECRET_QUERY", "Redactor"]

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
        # longest first, so a key that contains another is replaced whole
        self.secrets = sorted(values, key=len, reverse=True)

    # ------------------------------------------------------------------------------------------ pieces
    def header_value(self, name: str, value: str) -> str:
        if name.lower() in ("authorization", "proxy-authorization"):
            scheme, _, rest = str(value).partition(" ")
            if rest and scheme.isalpha():
                return f"{scheme} {self.placeholder}"
        return self.placeholder

    def text(self, text: str) -> str:
        """``text`` with known secret values and key-shaped strings replaced."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, self.placeholder)
        for pattern in KEY_PATTERNS.values():
            text = pattern.sub(self.placeholder, text)
        return text

    def body(self, body: Any) -> Any:
        if body is None:
            return None
        if isinstance(body, (bytes, bytearray)):
            try:
                decoded = bytes(body).decode("utf-8")
            except UnicodeDecodeError:
                return body
            scrubbed = self.text(decoded)
            return body if scrubbed == decoded else scrubbed.encode("utf-8")
        if isinstance(body, str):
            return self.text(body)
        return body

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        userinfo_free = parts.netloc.rsplit("@", 1)[-1]
        netloc = f"{self.placeholder}@{userinfo_free}" if "@" in parts.netloc else parts.netloc
        if not parts.query and netloc == parts.netloc:
            return url
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode(
            [(k, self.placeholder if SECRET_QUERY.match(k) else self.text(v)) for k, v in pairs]
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    # ------------------------------------------------------------------------------------------ vcrpy hooks
    def request(self, request: Any) -> Any:
        """vcrpy ``before_record_request``: scrub headers, URL and body of a ``vcr.request.Request``."""
        for name in list(request.headers.keys()):
            if name.lower() in self.headers:
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
            if name.lower() in self.headers:
                items = [self.header_value(name, v) for v in items]
            else:
                items = [self.text(v) if isinstance(v, str) else v for v in items]
            headers[name] = items if many else items[0]
        body = response.get("body")
        if isinstance(body, dict) and "string" in body:
            body["string"] = self.body(body["string"])
        return response
