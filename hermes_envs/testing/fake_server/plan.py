"""The plan for answering a generation request (the chosen turn, fault and delay), and what the chat and text
builders need from the model that made it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .fault_effects import FaultEffect
from .faults import Fault
from .records import Call
from .replies import Reply
from .tokens import TokenCounter
from .turns import Turn
from .view import RequestView

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
