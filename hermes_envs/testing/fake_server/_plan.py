"""The plan for answering a generation request (the chosen turn, fault and delay), and what the chat and text
builders need from the model that made it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ._fault_effects import FaultEffect
from ._faults import Fault
from ._records import Call
from ._replies import Reply
from ._tokens import TokenCounter
from ._turns import Turn
from ._view import RequestView

__all__ = ["Plan", "Planner"]


@dataclass
class Plan:
    """What answers a request once the turn and the fault are chosen (by :meth:`~.model.FakeModel.plan`, the one
    place both are picked)."""

    turn: Turn
    index: int | None
    fault: Fault | None
    effect: FaultEffect
    delay: float
    seq: int


class Planner(Protocol):
    """The model as the builders see it (:class:`~.model.FakeModel`): its settings and its planning step."""

    model: str
    created: int
    tokenizer: Any
    count: TokenCounter  # tokens in a text (memoised), and in a request's messages
    tool_parser: str
    stream_chunk_chars: int

    def plan(self, call: Call, view: RequestView, kind: str) -> Plan | Reply: ...
