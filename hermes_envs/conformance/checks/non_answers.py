"""HC413's relations on replies that are not the answer: garbage written in the proven answer's shape must not earn
clearly more than a wrong answer in that shape, or than no answer at all; a fragment of the answer (its first
third) must not earn what the whole answer earns.

A reward that catches its parser's exception (a JSON or SQL syntax error, a value that is not a number) and returns
a "neutral" score meant for an outage pays the policy for emitting something unreadable whenever it is unsure:
broken output beats an honest wrong attempt. The proof needs no knowledge of the task: around a confirmed gold,
the same answer shape holding a few characters no parser reads is scored beside the wrong value and the controls.

A reward that tests the reply the wrong way round (``reply in item["answer"]``: meant as membership in a list of
accepted answers, but the field is a string) credits any piece of the answer: "P" for "Paris", "1" for "1189".
"""

from __future__ import annotations

from hermes_envs.conformance._cases import Case, fmt_score, json_safe, run_case
from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.origin import GoldOrigin, TwinOrigin
from hermes_envs.conformance._observations.scoring import Controls, ScoredRollout, item_key, numeric
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short

__all__ = ["UNREADABLE", "fragment_relation", "unreadable_relation"]

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


def fragments(value: str) -> tuple[str, str] | None:
    """The first and the last third of an answer (at least one character each), or None when too short to cut."""
    text = value.strip()
    if len(text) < 3:
        return None
    third = max(1, len(text) // 3)
    head, tail = text[:third].strip(), text[-third:].strip()
    return (head, tail) if head and tail else None


def fragment_relation(
    s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]
) -> Finding | None:
    """Around a confirmed scalar gold: the gold's first third and its last third, each in the gold's shape, score
    below the gold. Both must keep the full score: a reward reading "y" as "yes" (a prefix) is lenient, not wrong;
    one crediting the start and the end of the answer alike tests containment."""
    template, value = gold.origin.template, gold.origin.value
    pieces = fragments(str(value)) if gold.origin.kind == "scalar" and value is not None else None
    if not template or pieces is None or twin.origin.value is None:
        return None
    head, tail = pieces
    case = Case(
        rule="a piece of the answer scores below the whole answer",
        item=gold.item,
        scripts={
            "right answer": [{"content": template.format(v=value)}],
            "wrong answer": [{"content": template.format(v=twin.origin.value)}],
            "its start": [{"content": template.format(v=head)}],
            "its end": [{"content": template.format(v=tail)}],
        },
        order=("right answer", "wrong answer", "its start", "its end"),
        holds=(
            ("wrong answer", "<", "right answer"),
            ("its start", ">=", "right answer"),
            ("its end", ">=", "right answer"),
        ),
    )
    run = run_case(s, case)
    if not run.violated:
        return None
    return Finding(
        "HC413",
        f"a piece of the answer should score below the whole answer; on item {short(gold.item, 90)} the answer "
        f"{short(value, 40)} scored {fmt_score(run.scores.get('right answer'))} and a wrong value "
        f"{fmt_score(run.scores.get('wrong answer'))}, yet its first characters alone ({head!r}) and its last "
        f"alone ({tail!r}) kept the full score. The reward tests whether the reply is contained in the answer "
        "(`reply in answer`), the wrong way round, so the policy learns to answer with a few safe characters. "
        f"Scores: {run.describe()}.",
        "compare the whole reply with the answer (equality after normalising); to accept several answers, test "
        "membership in a list of them (`reply in item['aliases']`, a list, not a string).",
        Severity.ERROR,
        subject="relation: a piece of the answer",
        counterexample=case.to_json() if json_safe(case.item) else None,
    )
