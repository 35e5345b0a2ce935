"""HC413's relation on structured answers: a field left out of a JSON answer must not score better than the same
field answered wrongly.

A reward that divides the right fields by the fields the reply GAVE (precision without recall), or that skips a
missing key (``got.get(k, v) == v``), gives a reply that leaves out every field it is unsure of full marks: training
then rewards omission. The proof needs no knowledge of the task: around a confirmed dict gold, a field whose wrong
value costs score is graded, and leaving it out altogether must cost at least as much.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_envs.conformance._cases import Case, json_safe, run_case
from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.origin import GoldOrigin, TwinOrigin
from hermes_envs.conformance._observations.scoring import ScoredRollout
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["omitted_field_relation"]

#: Fields of one gold tried (each costs three scored rollouts).
MAX_FIELDS = 3


def _answer(gold: ScoredRollout[GoldOrigin]) -> str:
    for message in reversed(gold.result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def _wrong(value: Any, other: Any) -> Any:
    """A wrong value for a field: another item's (``other``) when it differs, else the value perturbed."""
    if other is not None and other != value:
        return other
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str) and value:
        return "zq" + value[::-1]
    return None


def _written(gold: ScoredRollout[GoldOrigin], value: dict[str, Any]) -> str:
    """``value`` written as the proven gold wrote its dict (compact or spaced JSON, in its answer shape)."""
    template = str(gold.origin.template)
    spaced = template.format(v=json.dumps(json.loads(str(gold.origin.value)), indent=2)) == _answer(gold)
    return template.format(v=json.dumps(value, indent=2) if spaced else json.dumps(value))


def omitted_field_relation(
    s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]
) -> Finding | None:
    """Around a confirmed dict gold: for up to MAX_FIELDS fields, the answer with the field wrong must score below
    the complete answer (the field is graded), and the answer without it must score below too."""
    if gold.origin.kind != "dict":
        return None
    try:
        mine = json.loads(str(gold.origin.value))
        theirs = json.loads(str(twin.origin.value)) if twin.origin.value else {}
    except ValueError:
        return None
    if not isinstance(mine, dict) or len(mine) < 2:
        return None
    theirs = theirs if isinstance(theirs, dict) else {}
    for key in list(mine)[:MAX_FIELDS]:
        wrong = _wrong(mine[key], theirs.get(key))
        if wrong is None:
            continue
        left_out = {k: v for k, v in mine.items() if k != key}
        case = Case(
            rule="a JSON answer that leaves out a graded field scores below the complete answer",
            item=gold.item,
            scripts={
                "complete answer": [{"content": _answer(gold)}],
                f"{key!r} wrong": [{"content": _written(gold, {**mine, key: wrong})}],
                f"{key!r} left out": [{"content": _written(gold, left_out)}],
            },
            order=("complete answer", f"{key!r} wrong", f"{key!r} left out"),
            holds=(
                (f"{key!r} wrong", "<", "complete answer"),
                (f"{key!r} left out", ">=", "complete answer"),
            ),
        )
        run = run_case(s, case)
        if not run.violated:
            continue
        replay = case.to_json() if json_safe(case.item) else None
        return Finding(
            "HC413",
            f"an answer that leaves a field out should score below the complete one; on item {short(gold.item, 90)} "
            f"field {key!r} is graded (a wrong value {short(wrong, 40)} lowered the score), yet the answer without "
            f"{key!r} kept the full score: the reward grades only the fields the reply gives (it divides by the "
            "fields answered, or skips missing keys), so the policy learns to leave out whatever it is unsure of. "
            f"Scores: {run.describe()}.",
            "count a missing field as wrong: loop over the expected fields (the item's), not the reply's, and divide "
            "by their number.",
            Severity.ERROR,
            subject="relation: a field left out",
            counterexample=replay,
        )
    return None
