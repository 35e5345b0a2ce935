"""HC413's relations on structured answers: a field left out of a JSON answer must not score better than the same
field answered wrongly, and a complete answer must not score below the same answer with a nested field left out.

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
from hermes_envs.conformance._observations.scoring import ScoredRollout, numeric
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["nested_field_relation", "omitted_field_relation"]

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


def _prompted(s: EnvSession, item: Any, key: str) -> bool:
    """Whether the model is asked for ``key``: the name is in the item's prompt or the env's system prompt."""
    from hermes_envs.env._prompt import initial_messages_of

    try:
        messages = initial_messages_of(s.env(), item)
    except Exception:
        return False
    return any(
        f'"{key}"' in str(m.get("content") or "") or f"'{key}'" in str(m.get("content") or "")
        for m in messages
    )


def nested_field_relation(s: EnvSession) -> Finding | None:
    """Around an UNPROVEN dict gold (the item's own record as JSON scored no better than the controls): the same
    answer with one nested field (a list or object) left out must not score above it. When it does, and above
    the controls, the reward cannot read a complete answer: a lazy ``{.*?}`` regex stops at the first closing brace
    inside the nested value, so every complete reply fails to parse. An error when the prompt asks for the field."""
    from hermes_envs.conformance._observations.scoring import Controls, GoldProbes

    controls = s.observe(Controls)
    for gold in s.observe(GoldProbes).all_gold:
        if gold.origin.kind != "dict" or gold.model_requests or not numeric(gold.score):
            continue
        ceiling = controls.best(gold.item, s.settings.control_ceiling)[1]
        if float(gold.score) > ceiling + 1e-9:
            continue  # proven: the reward reads it
        try:
            mine = json.loads(str(gold.origin.value))
        except ValueError:
            continue
        if not isinstance(mine, dict):
            continue
        for key in [k for k, v in mine.items() if isinstance(v, (list, dict)) and v][:MAX_FIELDS]:
            left_out = {k: v for k, v in mine.items() if k != key}
            case = Case(
                rule="a complete JSON answer scores at least what it scores with a nested field left out",
                item=gold.item,
                scripts={
                    "complete answer": [{"content": _answer(gold)}],
                    f"{key!r} left out": [{"content": _written(gold, left_out)}],
                },
                order=("complete answer", f"{key!r} left out"),
                holds=((f"{key!r} left out", ">", "complete answer"), (f"{key!r} left out", ">", ceiling)),
            )
            run = run_case(s, case)
            if not run.violated:
                continue
            asked = _prompted(s, gold.item, key)
            return Finding(
                "HC413",
                f"a complete JSON answer should score at least what the same answer with a field left out scores; on "
                f"item {short(gold.item, 90)} the item's own {gold.origin.field!r} written as JSON scored no better "
                f"than a wrong answer, and the same object without its nested field {key!r} scored higher: the "
                "reward cannot read an answer holding nested braces or brackets (a lazy `\\{.*?\\}` regex stops at "
                "the first '}' inside the nested value; a flat pattern cannot match nesting), so every complete "
                f"reply scores as unreadable. Scores: {run.describe()}."
                + (
                    ""
                    if asked
                    else f" A warning: the prompt does not name {key!r}, so the record may hold more "
                    "than the answer asked for."
                ),
                "parse the reply's JSON with `json.JSONDecoder().raw_decode(text, text.index('{'))` or from the "
                "first '{' to the last '}', never with a non-greedy regex.",
                Severity.ERROR if asked else Severity.WARNING,
                subject="relation: a nested field",
                counterexample=case.to_json() if json_safe(case.item) else None,
            )
    return None
