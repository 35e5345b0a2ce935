"""What the fake server sends back: a :class:`Reply` (body, SSE events, transport behaviour), the :class:`Miss`
that turns a request into a recorded error, and the JSON encoder every reply uses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic_core

__all__ = ["Miss", "Reply", "dumps", "error_body"]


def dumps(obj: Any, _fast: Callable[[Any], bytes] = orjson.dumps) -> bytes:
    """Compact JSON as UTF-8 bytes, for every reply: orjson's encoder (a completion in about a third of
    pydantic-core's time, a tenth of the standard library's), and pydantic-core's for what orjson refuses
    (integers over 64 bits, non-string keys, bytes), so that every value encodes as it did before."""
    try:
        return _fast(obj)
    except TypeError:  # orjson.JSONEncodeError
        return pydantic_core.to_json(obj)


@dataclass
class Reply:
    """What to send: a body or SSE chunks, plus transport-level behaviour (delay, drop, truncation)."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    sse: list[bytes] | None = None
    delay: float = 0.0
    drop: bool = False  # close the connection without a response
    cut: bool = False  # send what is here (partial body / first SSE chunks) and then close the connection
    declared_length: int | None = None  # for a cut body: the Content-Length announced


class Miss(Exception):
    """A request the server does not answer normally: recorded as a failure and answered with ``status``."""

    def __init__(self, message: str, status: int = 409, code: str = "fake_server_miss") -> None:
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


def error_body(message: str, code: str, typ: str = "invalid_request_error") -> bytes:
    """An OpenAI-style error body."""
    return dumps({"error": {"message": message, "type": typ, "param": None, "code": code}})
