"""Faults: the ways a real model server misbehaves, on demand.

A fault sits on a scripted turn (``fault: 429``) or on the whole server as a seeded rate
(``FakeOpenAIServer(faults=["500:rate=0.2,seed=1"])``, CLI ``--fault 500:rate=0.2``).

Kinds (aliases in brackets) and options:

=====================  =========================================================================================
``429`` [rate_limit]   HTTP 429 with ``Retry-After`` (option ``retry_after`` seconds, default 0)
``500`` [server_error] HTTP 500 with an OpenAI-style error body
``503`` [unavailable]  HTTP 503 (option ``retry_after``)
``status``             any status: option ``code``
``latency``            sleep ``seconds`` (+ uniform ``jitter``) then answer normally
``drop``               close the connection without a response
``malformed_json``     200 with a body that is not valid JSON
``truncated_sse``      stream a few chunks (``after_chunks``, default 2) then close without ``[DONE]``;
                       on a non-streaming request, send half the body then close
``length``             finish_reason "length" with the tool call's arguments (or the content) cut in half
``empty_choices``      200 with ``choices: []``
``invalid_tool_json``  tool-call arguments that are not valid JSON
``unknown_tool``       the tool call names a tool that was not offered (option ``tool_name``)
=====================  =========================================================================================

What each kind does to an answer is the kind's :class:`~.fault_effects.FaultEffect` (``fault.effect``); this module
holds the fault *spec* (kind and options), its parsing, and the seeded decision of which fault hits a request.

Common options: ``rate`` (probability per request, default 1), ``seed`` (for the rate), ``times`` (how many requests
it hits; default 1 for a turn fault except ``latency``, unlimited for a server fault).
Spec strings: ``KIND[:key=value,key=value]``, e.g. ``429:retry_after=0.5,times=2``.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ._fault_effects import FAULT_EFFECTS, NO_FAULT, FaultEffect

__all__ = ["FAULT_KINDS", "Fault", "FaultInjector", "fault_from_obj", "parse_fault"]

FAULT_KINDS = tuple(FAULT_EFFECTS)
_ALIASES = {
    "rate_limit": ("status", 429),
    "server_error": ("status", 500),
    "unavailable": ("status", 503),
    "length_mid_tool_call": ("length", None),
    "dropped_connection": ("drop", None),
    "malformed": ("malformed_json", None),
    "truncated": ("truncated_sse", None),
}
_OPTIONS = ("code", "retry_after", "seconds", "jitter", "after_chunks", "tool_name", "rate", "seed", "times")


@dataclass
class Fault:
    kind: str
    code: int | None = None
    retry_after: float = 0.0
    seconds: float = 0.0
    jitter: float = 0.0
    after_chunks: int = 2
    tool_name: str = "no_such_tool"
    rate: float = 1.0
    seed: int | None = None
    times: int | None = None

    def __post_init__(self) -> None:
        kind = str(self.kind)
        if kind.isdigit():
            self.code = int(kind)
            kind = "status"
        elif kind in _ALIASES:
            kind, code = _ALIASES[kind]
            if code is not None:
                self.code = code
        if kind not in FAULT_KINDS:
            raise ValueError(
                f"fault kind should be one of {', '.join(FAULT_KINDS)}, an HTTP status such as 429, or an alias "
                f"({', '.join(_ALIASES)}); got {self.kind!r}"
            )
        self.kind = kind
        self.effect.check(self)
        if not 0.0 <= float(self.rate) <= 1.0:
            raise ValueError(f"fault rate should be between 0 and 1; got {self.rate!r}")

    @property
    def effect(self) -> FaultEffect:
        """What this fault does to an answer (its kind's hooks)."""
        return FAULT_EFFECTS[self.kind]

    @property
    def is_status(self) -> bool:
        return self.effect is FAULT_EFFECTS["status"]

    def to_dict(self) -> dict[str, Any]:
        defaults = Fault(kind="drop")
        d = {k: v for k, v in asdict(self).items() if k != "kind" and v != getattr(defaults, k)}
        return {"kind": self.effect.label(self), **d}

    def delay(self, rng: random.Random) -> float:
        """Seconds this fault waits before the answer (latency), drawn from ``rng``."""
        return self.effect.delay(self, rng)


def parse_fault(spec: str) -> Fault:
    """Parse ``KIND[:key=value,...]`` (e.g. ``429:retry_after=1,rate=0.5,seed=3``)."""
    kind, _, rest = spec.strip().partition(":")
    opts: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, val = part.partition("=")
        if not eq:
            raise ValueError(f"fault option should be key=value; got {part!r} in {spec!r}")
        opts[key.strip()] = _num(val.strip())
    return fault_from_obj({"kind": kind, **opts})


def fault_from_obj(obj: Any) -> Fault:
    """A Fault from a Fault, an int status, a spec string, or a mapping with ``kind`` and options."""
    if isinstance(obj, Fault):
        return obj
    if isinstance(obj, bool):
        raise TypeError(f"a fault should be a kind or a mapping; got {obj!r}")
    if isinstance(obj, int):
        return Fault(kind=str(obj))
    if isinstance(obj, str):
        return parse_fault(obj) if ":" in obj else Fault(kind=obj)
    if isinstance(obj, Mapping):
        if "kind" not in obj:
            raise ValueError(f"a fault mapping should have `kind`; got {dict(obj)!r}")
        unknown = [k for k in obj if k != "kind" and k not in _OPTIONS]
        if unknown:
            raise ValueError(f"fault options should be among {', '.join(_OPTIONS)}; got {unknown!r}")
        return Fault(**{k: obj[k] for k in obj})
    raise TypeError(f"a fault should be a kind, a status code or a mapping; got {obj!r}")


def _num(s: str) -> Any:
    for cast in (int, float):
        try:
            return cast(s)
        except ValueError:
            pass
    return s


class FaultInjector:
    """Decides, thread-safely and reproducibly, which fault (if any) hits a request."""

    def __init__(self, faults: list[Fault] | None = None, seed: int = 0) -> None:
        self.faults = list(faults or [])
        self._lock = threading.Lock()
        self._rngs: dict[int, random.Random] = {}
        self._seed = seed
        self._hits: dict[int, int] = {}
        self.jitter_rng = random.Random(seed)

    def _rng(self, fault: Fault) -> random.Random:
        key = id(fault)
        rng = self._rngs.get(key)
        if rng is None:
            rng = self._rngs[key] = random.Random(self._seed if fault.seed is None else fault.seed)
        return rng

    def fire(self, fault: Fault, default_times: int | None) -> bool:
        """Whether ``fault`` hits this request (consumes one of its ``times``)."""
        times = fault.times if fault.times is not None else default_times
        with self._lock:
            hits = self._hits.get(id(fault), 0)
            if times is not None and hits >= times:
                return False
            if fault.rate < 1.0 and self._rng(fault).random() >= fault.rate:
                return False
            self._hits[id(fault)] = hits + 1
            return True

    def pick(self, turn_fault: Fault | None) -> Fault | None:
        """The fault for a request: the turn's own first, then the server-wide ones in order."""
        if turn_fault is not None and self.fire(turn_fault, turn_fault.effect.turn_times):
            return turn_fault
        for f in self.faults:
            if self.fire(f, None):
                return f
        return None

    def effect_of(self, fault: Fault | None) -> FaultEffect:
        """``fault``'s effect, or the do-nothing effect for no fault."""
        return NO_FAULT if fault is None else fault.effect

    def reset(self) -> None:
        with self._lock:
            self._hits.clear()
            self._rngs.clear()
            self.jitter_rng = random.Random(self._seed)
