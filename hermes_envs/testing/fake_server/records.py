"""What the fake server records: one :class:`Call` per request it received, and what it answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .turns import Turn

__all__ = ["Call"]


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
