"""HC413's relation on answers the reward cannot read: garbage written in the proven answer's shape must not earn
clearly more than a wrong answer in that shape, or than no answer at all.

A reward that catches its parser's exception (a JSON or SQL syntax error, a value that is not a number) and returns
a "neutral" score meant for an outage pays the policy for emitting something unreadable whenever it is unsure:
broken output beats an honest wrong attempt. The proof needs no knowledge of the task: around a confirmed gold,
the same answer shape holding a few characters no parser reads is scored beside the wrong value and the controls.
"""

from __future__ import annotations

from hermes_envs.conformance._cases import Case, fmt_score, json_safe, run_case
from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.origin import GoldOrigin, TwinOrigin
from hermes_envs.conformance._observations.scoring import Controls, ScoredRollout, item_key, numeric
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["UNREADABLE", "unreadable_relation"]

#: What goes in the answer's place: no number, no word, no JSON, no SQL, no code any parser accepts.
UNREADABLE = "((( ???"
#: How much more than the best of the wrong answer and the controls counts as "clearly more" (a reward that also
#: pays for brevity may give a short reply a little more without reading it).
MARGIN = 0.05


def unreadable_relation(
    s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]
) -> Finding | None:
    """Around a confirmed gold: the unreadable answer in the gold's shape scores at most the wrong value in that
    shape, or the best negative control, plus :data:`MARGIN`."""
    template = gold.origin.template
    if not template or twin.origin.value is None:
        return None
    controls = [score for _name, score in s.observe(Controls).by_item.get(item_key(gold.item), ())]
    floor = max(controls, default=0.0)
    case = Case(
        rule="an answer the reward cannot read earns no more than a wrong answer or no answer",
        item=gold.item,
        scripts={
            "right answer": [{"content": template.format(v=gold.origin.value)}],
            "wrong answer": [{"content": template.format(v=twin.origin.value)}],
            "unreadable answer": [{"content": template.format(v=UNREADABLE)}],
        },
        order=("right answer", "wrong answer", "unreadable answer"),
        holds=(
            ("wrong answer", "<", "right answer"),
            ("unreadable answer", ">", floor + MARGIN),
        ),
    )
    run = run_case(s, case)
    wrong, unreadable = run.scores.get("wrong answer"), run.scores.get("unreadable answer")
    if not run.violated or not numeric(wrong) or not numeric(unreadable):
        return None
    if float(unreadable) <= float(wrong) + MARGIN:
        return None
    return Finding(
        "HC413",
        f"an answer the reward cannot read should earn no more than a wrong one; on item {short(gold.item, 90)} "
        f"the answer shape {short(template, 40)} holding {UNREADABLE!r} scored {fmt_score(unreadable)}, above the "
        f"wrong value {short(twin.origin.value, 40)} ({fmt_score(wrong)}) and every control (best "
        f"{fmt_score(floor)}). The reward gives a reply it fails to parse (its parser raised, or found no value) a "
        "score of its own, so the policy learns to emit broken output when unsure instead of attempting an answer. "
        f"Scores: {run.describe()}.",
        "score an answer that does not parse (a syntax error, no value) as wrong, the same as a wrong answer; keep "
        "any neutral score for failures of your own infrastructure (a timeout, a lost connection), told apart by "
        "the exception's type and message, not for the model's output.",
        Severity.ERROR,
        subject="relation: an unreadable answer",
        counterexample=case.to_json() if json_safe(case.item) else None,
    )
