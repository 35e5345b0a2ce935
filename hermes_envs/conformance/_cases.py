"""Replayable counterexamples: the item, the model's turns of each transcript, and the comparisons of their scores
that together make the violation.

A :class:`Case` is what an error finding of a reward relation carries (``Finding.counterexample``). The check that
found it and ``hermes-envs replay`` run it with the same code (:func:`run_case`): each script is played through the
real agent loop against the fake model (tools run again, in a fresh sandbox), scored by the env's compute_reward,
in the stored order; the violation reproduces when every comparison holds again.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ADVANCE_CALLS",
    "Case",
    "CaseRun",
    "FETCH_CALLS",
    "advance_past",
    "case_json",
    "fetch_item",
    "fmt_score",
    "is_transcript",
    "json_safe",
    "run_case",
    "script_of",
    "transcript_result",
]

#: The comparisons a case may state: ``(left, op, right)``, each side a script name or a number.
_OPS = {
    "<": lambda a, b: a < b - 1e-9,
    "<=": lambda a, b: a <= b + 1e-9,
    ">": lambda a, b: a > b + 1e-9,
    ">=": lambda a, b: a >= b - 1e-9,
    "!=": lambda a, b: abs(a - b) > 1e-9,
    "==": lambda a, b: abs(a - b) <= 1e-9,
}


@dataclass(frozen=True)
class Case:
    """A counterexample: ``scripts`` (name -> model turns in the fake server's format) scored in ``order`` against
    ``item`` (or ``items[name]`` for a script scored on another item; a script of whole messages, with roles, is scored as it
    is); it violates the rule when every comparison
    in ``holds`` is true. ``rule`` says, in a sentence, which rule every correct env obeys. ``advance``: scripts
    before whose rollout the trainer's ``get_next_item()`` is called (until it returns another item than the one
    scored), as it is between groups in flight. ``judge``: per script name, the fake model's reply
    (``{"content": ...}``, or ``{"fault": 500}``) to every request made while that script is SCORED (a judge's);
    scripts not named there are scored with the session's usual replies."""

    rule: str
    item: Any
    scripts: Mapping[str, list[dict[str, Any]]]
    order: tuple[str, ...]
    holds: tuple[tuple[str, str, Any], ...]
    items: Mapping[str, Any] = field(default_factory=dict)
    advance: tuple[str, ...] = ()
    judge: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fetch: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "item": self.item,
            "items": dict(self.items),
            "scripts": {k: list(v) for k, v in self.scripts.items()},
            "order": list(self.order),
            "holds": [list(h) for h in self.holds],
            "advance": list(self.advance),
            "fetch": list(self.fetch),
        }
        if self.judge:
            out["judge"] = {k: dict(v) for k, v in self.judge.items()}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Case:
        return cls(
            rule=str(data.get("rule", "")),
            item=data["item"],
            scripts={str(k): list(v) for k, v in data["scripts"].items()},
            order=tuple(data["order"]),
            holds=tuple((str(a), str(op), b) for a, op, b in data["holds"]),
            items=dict(data.get("items") or {}),
            advance=tuple(str(a) for a in data.get("advance") or ()),
            judge={str(k): dict(v) for k, v in (data.get("judge") or {}).items()},
            fetch=tuple(str(a) for a in data.get("fetch") or ()),
        )


def script_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model's turns of a transcript, as a script the fake server can play again (``probes.play``)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        turn: dict[str, Any] = {"content": message.get("content") or ""}
        if message.get("reasoning_content"):
            turn["reasoning_content"] = message["reasoning_content"]
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            arguments: Any = function.get("arguments", "{}")
            try:
                arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            except ValueError:
                pass  # malformed arguments are replayed as the same text
            calls.append({"name": function.get("name", ""), "arguments": arguments})
        if calls:
            turn["tool_calls"] = calls
        turns.append(turn)
    return turns or [{"content": ""}]


def is_transcript(script: list[dict[str, Any]]) -> bool:
    """Whether ``script`` holds whole messages (roles, tool results) rather than model turns to play."""
    return bool(script) and all("role" in turn for turn in script)


def transcript_result(messages: list[dict[str, Any]]) -> Any:
    """An AgentResult of ``messages`` as the loop would have returned it."""
    from hermes_envs._chat import assistant_turns
    from hermes_envs.agent.result import AgentResult

    last = messages[-1] if messages else {}
    return AgentResult(
        messages=[dict(m) for m in messages],
        turns_used=assistant_turns(messages),
        finished_naturally=last.get("role") == "assistant" and not last.get("tool_calls"),
    )


def json_safe(value: Any) -> bool:
    """Whether ``value`` survives a JSON round trip unchanged (else a case cannot be written next to a report)."""
    try:
        same: bool = json.loads(json.dumps(value)) == value
        return same
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class CaseRun:
    """The scores of one run of a case, and whether its violation held."""

    scores: Mapping[str, Any]
    errors: Mapping[str, str]
    violated: bool
    requests: Mapping[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        parts = [f"{name}={fmt_score(score)}" for name, score in self.scores.items()]
        parts += [f"{name} raised {error}" for name, error in self.errors.items()]
        parts += [f"judge requests for {name}={count}" for name, count in self.requests.items()]
        return ", ".join(parts)


def fmt_score(score: Any) -> str:
    """A score as a finding prints it (``0.5``; anything not a number as its repr)."""
    return f"{score:g}" if isinstance(score, (int, float)) and not isinstance(score, bool) else repr(score)


def run_case(s: Any, case: Case) -> CaseRun:
    """Play and score every script of ``case`` in its order on session ``s``; the violation holds when every
    comparison does (a script whose reward raised, or scored no number, makes its comparisons false)."""
    from hermes_envs.conformance._observations.origin import CheckOrigin
    from hermes_envs.conformance._observations.rollouts import run_probe
    from hermes_envs.conformance._observations.scoring import numeric, score_rollout
    from hermes_envs.conformance._probes import play

    scores: dict[str, Any] = {}
    errors: dict[str, str] = {}
    requests: dict[str, int] = {}
    for index, name in enumerate(case.order):
        script = case.scripts[name]
        item = case.items.get(name, case.item)
        if name in case.fetch:
            fetch_item(s, item)
        if name in case.advance:
            advance_past(s, item)
        if is_transcript(script):  # whole messages: scored as they are, no model or tools run
            result, task_id = transcript_result(script), f"case-{index}-{uuid.uuid4().hex[:8]}"
        else:
            # A script ending on tool calls ran out of turns: give it exactly its turns again.
            turns = len(script) if script[-1].get("tool_calls") else max(len(script) + 1, 2)
            result, task_id = run_probe(s, item, play(script), turns, "case", "cases")
        reply = case.judge.get(name)
        origin = CheckOrigin(f"case script {name!r}")
        if reply is None:
            scored = score_rollout(s, item, result, task_id, origin, "cases")
        else:
            with s.responding(lambda _body, reply=reply: dict(reply)):
                scored = score_rollout(s, item, result, task_id, origin, "cases")
        scores[name] = scored.score
        requests[name] = scored.model_requests
        if scored.error:
            errors[name] = scored.error

    def value(side: Any) -> float | None:
        if isinstance(side, str) and side.startswith("requests:"):
            count = requests.get(side[len("requests:") :])
            return float(count) if count is not None else None
        if isinstance(side, str):
            got = scores.get(side)
            return float(got) if numeric(got) else None
        return float(side) if isinstance(side, (int, float)) and math.isfinite(side) else None

    violated = True
    for left, op, right in case.holds:
        a, b = value(left), value(right)
        if a is None or b is None or not _OPS[op](a, b):
            violated = False
            break
    shown = {k: v for k, v in requests.items() if any(f"requests:{k}" in (a, b) for a, _op, b in case.holds)}
    return CaseRun(scores=scores, errors=errors, violated=violated, requests=shown)


#: get_next_item calls made at most to move the env past the item a case scores.
ADVANCE_CALLS = 8
#: get_next_item calls made at most to reach the item a case scores (a dataset's cycle is rarely longer).
FETCH_CALLS = 2000


#: What :func:`_next_items` yields last when ``get_next_item()`` raised.
_RAISED = object()


def _next_items(s: Any, limit: int) -> Iterator[Any]:
    """The env's ``get_next_item()`` results, called as the trainer calls it, at most ``limit`` times; when it
    raises, :data:`_RAISED` and the end (its own failures are HC202/HC203's findings, not a case's)."""
    for _ in range(limit):
        try:
            yield s.run_env(lambda env: env.get_next_item(), phase="cases")
        except Exception:
            yield _RAISED
            return


def advance_past(s: Any, item: Any) -> Any:
    """Call ``get_next_item()`` as the trainer does between groups, until it returns an item other than ``item``
    (at most :data:`ADVANCE_CALLS` calls); returns the last item it gave (None when it raised)."""
    got: Any = None
    for got in _next_items(s, ADVANCE_CALLS):
        if got is _RAISED:
            return None
        if got is None or repr(got) != repr(item):
            return got
    return got


def fetch_item(s: Any, item: Any) -> bool:
    """Call ``get_next_item()`` until it returns ``item`` (at most :data:`FETCH_CALLS` calls), as the trainer
    fetched the item it then rolls out; whether it came."""
    for got in _next_items(s, FETCH_CALLS):
        if got is _RAISED or got is None:
            return False
        if repr(got) == repr(item):
            return True
    return False


def case_json(case: Case) -> dict[str, Any] | None:
    """``case`` as a finding's counterexample, or None when its items cannot be written as JSON."""
    if (
        json_safe(case.item)
        and json_safe(dict(case.items))
        and json_safe({k: list(v) for k, v in case.scripts.items()})
    ):
        return case.to_json()
    return None
