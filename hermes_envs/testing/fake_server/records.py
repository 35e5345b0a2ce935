"""What the fake server records and answers: a :class:`Call` per request, a :class:`Reply` to send, a miss.

Shared by every responder and by both transports (aiohttp in ``app.py``, the in-process one in ``server.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .turns import Turn

__all__ = ["Call", "Miss", "Reply", "dumps", "error_body"]

dumps = json.JSONEncoder(separators=(",", ":")).encode  # ASCII-escaped: the C fast path


@dataclass
class Call:
    """One request the server received and what it answered."""

    route: str
    method: str
    body: Any
    status: int = 200
    response: Any = None
    matched_turn: Turn | None = None
    turn_index: int | None = None  # 0-based position in the script (turn k+1)
    fault: str | None = None
    error: str | None = None
    stream: bool = False
    responder: str = "script"  # "script" | "policy" | "miss" | "route"

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and self.error is None


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
    return dumps({"error": {"message": message, "type": typ, "param": None, "code": code}}).encode()
