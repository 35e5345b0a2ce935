"""HC413 — the reward as a function: metamorphic relations around the best transcript the kit knows for an item.

No list of known mistakes: starting from a transcript that scores above the controls (a gold the kit proved, or the
env's own good transcript), it is transformed in ways whose effect on the score every correct reward agrees on:

- must not matter: the same transcript played again (fresh task id and tool-call ids) after another item was
  scored; thoughts the model did not present as its answer (``reasoning_content``) around its answer.
- must lower (or not raise): a wrong answer does not become right because the right one was only thought of.
- doubts (warnings): the item's answer and another item's answer score the same (the reward may not read the item).
- cost: hostile replies (long runs of digits, nested markup) must not make compute_reward spin on the CPU.

Errors need a counterexample to such a rule, replayable (``Finding.counterexample``, ``hermes-envs replay``); a
relation that rests on the kit's guess of the answer needs the env to confirm the guess first (``GoldProbes.
confirmed``). The default run checks the first proven item; ``--thorough`` checks every one.
"""

from __future__ import annotations

import time
from typing import Any

from hermes_envs.conformance._cases import Case, CaseRun, json_safe, run_case, script_of
from hermes_envs.conformance.checks.reward_contract import _STATS
from hermes_envs.conformance.findings import Finding, NotApplicable, Severity
from hermes_envs.conformance.observations.rollouts import probe_items, run_probe
from hermes_envs.conformance.observations.scoring import (
    Controls,
    EnvTranscripts,
    GoldProbes,
    ScoredRollout,
    _short,
    item_key,
    numeric,
    score_rollout,
)
from hermes_envs.conformance.probes import say
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession

#: CPU seconds (the loop thread's own, which a loaded machine does not inflate) one compute_reward call may spend
#: on a hostile reply before it is re-measured; twice over it is an error.
COST_CPU_SECONDS = 5.0
#: Replies that make a careless parser backtrack or recurse: long digit runs, nested markup, open tags.
HOSTILE_REPLIES = (
    ("a 30,000-digit run", "1" * 30_000 + "!"),
    ("3,000 nested \\boxed{", "\\boxed{" * 3_000),
    ("5,000 open <answer> tags", "<answer>" * 5_000),
)


def proven(s: EnvSession) -> list[ScoredRollout]:
    """Transcripts known to score above the item's best control: the env's own good ones, then the kit's golds."""
    controls = s.observe(Controls)
    ceiling = s.settings.control_ceiling
    out = [
        e
        for e in s.observe(EnvTranscripts).good
        if numeric(e.score) and e.score > controls.best(e.item, ceiling)[1]
    ]
    seen = {item_key(e.item) for e in out}
    out += [g for g in s.observe(GoldProbes).gold if item_key(g.item) not in seen and numeric(g.score)]
    return out


def _text_only(script: list[dict[str, Any]]) -> bool:
    return not any(turn.get("tool_calls") for turn in script)


def _finding(case: Case, run: CaseRun, message: str, fix: str, severity: Severity, subject: str) -> Finding:
    replay = case.to_json() if json_safe(case.item) and json_safe(dict(case.items)) else None
    return Finding(
        "HC413",
        f"{message} Scores: {run.describe()}.",
        fix,
        severity,
        subject=subject,
        counterexample=replay,
    )


def _order_relation(
    s: EnvSession, entry: ScoredRollout, other: Any, other_best: ScoredRollout | None
) -> Finding | None:
    """The same transcript scored again, after another item's rollout (its own best one, when known), must score
    the same."""
    script = script_of(entry.result.messages)
    between = script_of(other_best.result.messages) if other_best is not None else script
    case = Case(
        rule="a transcript scores the same when played again after another item was scored",
        item=entry.item,
        scripts={"transcript": script, "other item": between, "transcript again": script},
        items={"other item": other},
        order=("transcript", "other item", "transcript again"),
        holds=(("transcript again", "!=", "transcript"),),
    )
    run = run_case(s, case)
    first = float(entry.score)
    now = run.scores.get("transcript")
    drifted = (
        numeric(now) and abs(float(now) - first) > 1e-9
    )  # the session's earlier scoring already changed it
    if not (run.violated or drifted):
        return None
    text_only = _text_only(script)
    caveat = (
        ""
        if text_only
        else " (a warning: its tools ran again, and a tool whose output varies can change a correct score)"
    )
    return _finding(
        case,
        run,
        f"compute_reward should score a transcript the same whatever was scored before it and whatever its task "
        f"and tool-call ids; {entry.label} on item {_short(entry.item, 90)} scored {first:g} when first scored, "
        f"{_fmt(now)} when played again later in the session, then, after the same reply was scored on another "
        f"item, {_fmt(run.scores['transcript again'])}{caveat}.",
        "keep no state between compute_reward calls (no caches keyed on anything but the item and transcript, no "
        "counters or 'last answer' on self), and never read the task id or tool-call ids.",
        Severity.ERROR if text_only else Severity.WARNING,
        "relation: order of scoring",
    )


def _answer_relations(s: EnvSession, gold: ScoredRollout, twin: ScoredRollout) -> list[Finding]:
    """Around a confirmed gold: thoughts the model did not give as its answer are not the answer (both ways)."""
    template, value, wrong = str(gold.template), str(gold.value), str(twin.value)
    right_text, wrong_text = template.format(v=value), template.format(v=wrong)
    findings = []
    fix_thoughts = (
        "grade the answer the model gave (the content of its last assistant message), not its reasoning: read "
        "`final_response(result)`, never `reasoning_content` or the concatenation of every field."
    )
    cases = [
        (
            Case(
                rule="thoughts the model did not give as its answer do not lower a correct answer",
                item=gold.item,
                scripts={
                    "answer": [{"content": right_text}],
                    "answer, other thoughts": [
                        {"content": right_text, "reasoning_content": f"Could it be {wrong}? No."}
                    ],
                },
                order=("answer", "answer, other thoughts"),
                holds=(("answer, other thoughts", "<", "answer"),),
            ),
            f"a correct answer should score the same whatever the model thought before giving it; {right_text!r} "
            f"scored lower once its reasoning_content mentioned the wrong {wrong!r} (not given as the answer)",
            "relation: thoughts lower a correct answer",
        ),
        (
            Case(
                rule="the right value only thought of does not make a wrong answer right",
                item=gold.item,
                scripts={
                    "wrong answer": [{"content": wrong_text}],
                    "wrong answer, right thoughts": [
                        {"content": wrong_text, "reasoning_content": f"Maybe it is {value}."}
                    ],
                },
                order=("wrong answer", "wrong answer, right thoughts"),
                holds=(("wrong answer, right thoughts", ">", "wrong answer"),),
            ),
            f"a wrong answer should not gain credit from thoughts; {wrong_text!r} scored higher once its "
            f"reasoning_content mentioned the right {value!r}, which the model never gave as its answer",
            "relation: thoughts credit a wrong answer",
        ),
    ]
    for case, message, subject in cases:
        run = run_case(s, case)
        if run.violated:
            findings.append(
                _finding(
                    case,
                    run,
                    f"{message} on item {_short(gold.item, 90)}.",
                    fix_thoughts,
                    Severity.ERROR,
                    subject,
                )
            )
    return findings


def _item_blind(s: EnvSession, gold: ScoredRollout, twin: ScoredRollout) -> Finding:
    """The twin (another item's value, same shape) scored as well as the gold: the reward may ignore the item."""
    return Finding(
        "HC413",
        f"another item's answer should score below this item's own; written as {gold.template!r}, "
        f"{twin.value!r} (a wrong value for this item) scored {_fmt(twin.score)} and {gold.value!r} scored "
        f"{_fmt(gold.score)} on item {_short(gold.item, 90)} (a warning: the kit guessed that field "
        f"{gold.field!r} is the answer; if it is not, ignore this).",
        "compare the reply with this item's own answer (read it from the `item` argument), so that a reply "
        "correct for another item earns nothing here.",
        Severity.WARNING,
        subject="relation: another item's answer",
    )


def _cost(s: EnvSession, item: Any) -> Finding | None:
    """compute_reward on hostile replies: CPU time measured on the loop thread, re-measured before an error."""
    for what, text in HOSTILE_REPLIES:
        spent: list[float] = []
        for _attempt in range(2):
            result, task_id = run_probe(s, item, say(text), 2, "hostile", "cases")
            start = time.thread_time()
            score_rollout(s, item, result, task_id, "cases")
            spent.append(time.thread_time() - start)
            if spent[-1] <= COST_CPU_SECONDS:
                break
        if len(spent) == 2 and min(spent) > COST_CPU_SECONDS:
            return Finding(
                "HC413",
                f"compute_reward should score any reply in bounded time; on {what} it spent {spent[0]:.1f} s and "
                f"{spent[1]:.1f} s of CPU (twice over {COST_CPU_SECONDS:g} s) on item {_short(item, 90)}: a model "
                "that writes such a reply stalls every rollout.",
                "avoid nested quantifiers in regexes ((\\d+)*, (a+)+), cap the text you parse (e.g. the last 2,000 "
                "characters), and parse nesting with a loop, not recursion.",
                subject="relation: cost on a hostile reply",
            )
    return None


def _fmt(score: Any) -> str:
    return f"{score:g}" if numeric(score) else repr(score)


@check(
    "HC413",
    "reward-relations",
    "the reward obeys the relations every correct reward obeys (metamorphic)",
    requires=(*_STATS, "HC404"),
)
def reward_relations(s: EnvSession) -> list[Finding]:
    """Rewards whose score changes under transformations that cannot matter to any correct reward (the same
    transcript after another item was scored, thoughts around the answer, hostile long replies), and (a warning)
    rewards that score another item's answer as well as the item's own."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    best = proven(s)
    if not best:
        raise NotApplicable(
            "no transcript is known to score above the controls (see HC407), so there is nothing to transform"
        )
    found = s.observe(GoldProbes)
    items = probe_items(s)
    findings: list[Finding] = []
    for entry in best if s.settings.thorough else best[:1]:
        others = [i for i in items if item_key(i) != item_key(entry.item)]
        if others:
            other_best = next((b for b in best if item_key(b.item) == item_key(others[0])), None)
            finding = _order_relation(s, entry, others[0], other_best)
            if finding is not None:
                findings.append(finding)
        twin = found.twins.get(item_key(entry.item))
        if entry.source == "field" and entry.template and twin is not None:
            if found.confirmed(entry):
                findings += _answer_relations(s, entry, twin)
            elif numeric(twin.score) and numeric(entry.score) and twin.score >= entry.score - 1e-9:
                findings.append(_item_blind(s, entry, twin))
        cost = _cost(s, entry.item)
        if cost is not None:
            findings.append(cost)
    return findings
