"""What the fake server records: one :class:`Call` per request it received, and what it answered.

Every request is recorded, for the whole life of the server (until ``reset()``). Once answered, a call keeps its
body and response as JSON bytes and decodes them on first access: a parsed request is a dozen dicts and lists, and
tens of thousands of them kept alive make every garbage collection walk them all (measured: twice the cost of a
request after 60 000 requests). Bytes are not tracked by the collector.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ._replies import dumps

if TYPE_CHECKING:
    from ._turns import Turn

__all__ = ["Call"]

_UNSET: Any = object()


class Call:
    """One request the server received and what it answered."""

    __slots__ = (
        "_body",
        "_body_json",
        "_response",
        "_response_json",
        "error",
        "fault",
        "matched_turn",
        "method",
        "responder",
        "route",
        "status",
        "stream",
        "turn_index",
    )
    _body: Any
    _body_json: bytes | None  # the JSON the parsed value was read from (set while the parsed value is _UNSET)
    _response: Any
    _response_json: bytes | None

    def __init__(
        self,
        route: str,
        method: str,
        body: Any,
        status: int = 200,
        response: Any = None,
        matched_turn: Turn | None = None,
        turn_index: int | None = None,  # 0-based position in the script (turn k+1)
        fault: str | None = None,
        error: str | None = None,
        stream: bool = False,
        responder: str = "script",  # "script" | "policy" | "miss" | "route"
    ) -> None:
        self.route, self.method, self.status = route, method, status
        # the slots the body and response setters fill, set directly: a Call is made for every request
        self._body, self._body_json, self._response, self._response_json = body, None, response, None
        self.matched_turn, self.turn_index, self.fault = matched_turn, turn_index, fault
        self.error, self.stream, self.responder = error, stream, responder

    @property
    def body(self) -> Any:
        """The request body as parsed JSON (None for a GET or a body that was not JSON)."""
        if self._body is _UNSET:
            self._body = json.loads(self._body_json)  # type: ignore[arg-type]  # set with _UNSET
        return self._body

    @body.setter
    def body(self, value: Any) -> None:
        self._body, self._body_json = value, None

    @property
    def response(self) -> Any:
        """The answer as JSON data (the whole completion for a streamed answer), or None."""
        if self._response is _UNSET:
            self._response = json.loads(self._response_json)  # type: ignore[arg-type]  # set with _UNSET
        return self._response

    @response.setter
    def response(self, value: Any) -> None:
        self._response, self._response_json = value, None

    @property
    def response_json(self) -> bytes | None:
        """The answer as JSON bytes once sealed or set (None before, or when there is no answer)."""
        return self._response_json

    @response_json.setter
    def response_json(self, value: bytes) -> None:
        """Record the answer as the JSON bytes it was sent as (decoded on first read of :attr:`response`), so
        that sealing does not encode it a second time."""
        self._response_json = value
        self._response = _UNSET

    def seal(self, raw_body: bytes | None) -> None:
        """Keep the body (``raw_body``, the bytes it was parsed from) and the response as JSON bytes from now on."""
        # the bytes first, then the marker: a reader in another thread never sees the marker without the bytes
        if raw_body and self._body is not None and self._body_json is None:
            self._body_json = raw_body
            self._body = _UNSET
        if self._response is not None and self._response_json is None:
            self._response_json = dumps(self._response)
            self._response = _UNSET

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and self.error is None

    def __getstate__(self) -> dict[str, Any]:  # process mode sends calls to the parent; the marker stays here
        state = {name: getattr(self, name) for name in self.__slots__}
        for name in ("_body", "_response"):
            if state[name] is _UNSET:
                state[name] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        for name in ("_body", "_response"):
            if state[name] is None and state[name + "_json"] is not None:
                object.__setattr__(self, name, _UNSET)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Call):
            return NotImplemented
        fields = ("route", "method", "body", "status", "response", "turn_index", "fault", "error", "stream")
        return (
            all(getattr(self, f) == getattr(other, f) for f in fields) and self.responder == other.responder
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        return (
            f"Call(route={self.route!r}, method={self.method!r}, status={self.status}, responder={self.responder!r}, "
            f"turn_index={self.turn_index!r}, fault={self.fault!r}, error={self.error!r}, stream={self.stream})"
        )
