"""HC413 — the reward as a function: metamorphic relations around the best transcript the kit knows for an item.

No list of known mistakes: starting from a transcript that scores above the controls (a gold the kit proved, or the
env's own good transcript), it is transformed in ways whose effect on the score every correct reward agrees on:

- must not matter: the same transcript played again (fresh task id and tool-call ids) after another item was
  scored; the same transcript scored again after the trainer called ``get_next_item()`` (the reward reads its
  ``item`` argument, not "the current item"); thoughts the model did not present as its answer
  (``reasoning_content``) around its answer; for a reward that asks a judge, whether a reply new to this item is
  judged must not depend on another item having been judged on the same text (a verdict cache keyed on the text).
- must lower (or not raise): a wrong answer does not become right because the right one was only thought of; the
  right list hedged with another item's entries (a superset, in either order) does not keep exactly the full
  score in both orders; an ordered list with entries omitted scores below
  the complete one when the reversed list does.
- doubts (warnings): the item's answer and another item's answer score the same (the reward may not read the item).
- cost: hostile replies (long runs of digits, nested markup) must not make compute_reward spin on the CPU.

Errors need a counterexample to such a rule, replayable (``Finding.counterexample``, ``hermes-envs replay``); a
relation that rests on the kit's guess of the answer needs the env to confirm the guess first (``GoldProbes.
confirmed``). The default run checks the first proven item; ``--thorough`` checks every one.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from hermes_envs.conformance._cases import Case, CaseRun, fmt_score, json_safe, run_case, script_of
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._observations.origin import (
    EnvOrigin,
    GoldOrigin,
    Origin,
    TwinOrigin,
)
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import (
    Controls,
    EnvTranscripts,
    GoldProbes,
    ScoredProbes,
    ScoredRollout,
    item_key,
    numeric,
)
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.field_relations import nested_field_relation, omitted_field_relation
from hermes_envs.conformance.checks.non_answers import fragment_relation, unreadable_relation
from hermes_envs.conformance.checks.reward_cost import cost_relation
from hermes_envs.env._prompt import format_prompt_of


def proven(s: EnvSession) -> list[ScoredRollout[EnvOrigin | GoldOrigin]]:
    """Transcripts known to score above the item's best control: the env's own good ones, then the kit's golds."""
    controls = s.observe(Controls)
    ceiling = s.settings.control_ceiling
    out: list[ScoredRollout[EnvOrigin | GoldOrigin]] = [
        e
        for e in s.observe(EnvTranscripts).good
        if numeric(e.score) and e.score > controls.best(e.item, ceiling)[1]
    ]
    seen = {item_key(e.item) for e in out}
    out += [g for g in s.observe(GoldProbes).gold if item_key(g.item) not in seen and numeric(g.score)]
    return out


def _field_gold(entry: ScoredRollout[Origin]) -> TypeGuard[ScoredRollout[GoldOrigin]]:
    """Whether ``entry`` is a gold answer written from an item field in an answer shape (one a twin can mirror)."""
    origin = entry.origin
    return isinstance(origin, GoldOrigin) and origin.source == "field" and bool(origin.template)


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
    s: EnvSession, entry: ScoredRollout[Origin], other: Any, other_best: ScoredRollout[Origin] | None
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
    text_only, caveat = _replay_caveat(script)
    return _finding(
        case,
        run,
        f"compute_reward should score a transcript the same whatever was scored before it and whatever its task "
        f"and tool-call ids; {entry.label} on item {short(entry.item, 90)} scored {first:g} when first scored, "
        f"{fmt_score(now)} when played again later in the session, then, after the same reply was scored on another "
        f"item, {fmt_score(run.scores['transcript again'])}{caveat}.",
        "keep no state between compute_reward calls (no caches keyed on anything but the item and transcript, no "
        "counters or 'last answer' on self), and never read the task id or tool-call ids.",
        Severity.ERROR if text_only else Severity.WARNING,
        "relation: order of scoring",
    )


def _replay_caveat(script: list[dict[str, Any]]) -> tuple[bool, str]:
    """(whether the transcript is text only, the note a replay with tools adds): tools run again on a replay, and
    a tool whose output varies can change a correct score, so such a finding is only a warning."""
    if _text_only(script):
        return True, ""
    return (
        False,
        " (a warning: its tools ran again, and a tool whose output varies can change a correct score)",
    )


def _next_item_relation(s: EnvSession, entry: ScoredRollout[Origin]) -> Finding | None:
    """The same transcript scored again after the trainer called get_next_item() must score the same: the reward
    grades against its ``item`` argument, not the item the env handed out last."""
    script = script_of(entry.result.messages)
    text_only = _text_only(script)
    # A transcript with tool calls is first replayed once more with nothing in between: when that scores the same,
    # its tools replay stably, and a change after get_next_item is the reward's, not a tool's.
    control = () if text_only else ("transcript again",)
    case = Case(
        rule="a transcript scores the same after the trainer fetched the next item (get_next_item)",
        item=entry.item,
        scripts={
            "transcript": script,
            **{c: script for c in control},
            "transcript after get_next_item": script,
        },
        order=("transcript", *control, "transcript after get_next_item"),
        holds=(
            *((c, "==", "transcript") for c in control),
            ("transcript after get_next_item", "!=", "transcript"),
        ),
        # Fetched again first only from a dataset that cycles (a generated one may never hand it out again).
        fetch=("transcript",) if s.observe(TrainingScan).cycled else (),
        advance=("transcript after get_next_item",),
    )
    run = run_case(s, case)
    if not run.violated:
        return None
    caveat = (
        ""
        if text_only
        else " (its tools ran again and replay stably: replayed with nothing in between, it scored the same)"
    )
    return _finding(
        case,
        run,
        f"compute_reward should grade against its `item` argument; {entry.label} on item "
        f"{short(entry.item, 90)} scored {fmt_score(run.scores.get('transcript'))}, then, once the trainer had called "
        f"get_next_item() (which returned another item), the same transcript for the same item scored "
        f"{fmt_score(run.scores.get('transcript after get_next_item'))}: the reward reads the current item, the one "
        f"get_next_item returned last (kept on self, e.g. self._current), not the item it is given, so with groups "
        f"in flight every rollout is scored against the wrong item{caveat}.",
        "read the question, the answer and anything else about the task from compute_reward's `item` argument; "
        "never keep 'the current item' on self in get_next_item for the reward to use.",
        Severity.ERROR,
        "relation: get_next_item between rollout and reward",
    )


def _answer_relations(
    s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]
) -> list[Finding]:
    """Around a confirmed gold: thoughts the model did not give as its answer are not the answer (both ways)."""
    template, value, wrong = str(gold.origin.template), str(gold.origin.value), str(twin.origin.value)
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
                    f"{message} on item {short(gold.item, 90)}.",
                    fix_thoughts,
                    Severity.ERROR,
                    subject,
                )
            )
    return findings


def _final_text(entry: ScoredRollout[Origin]) -> str:
    """The content of the last assistant message of ``entry``'s transcript (the answer the gold probe gave)."""
    for message in reversed(entry.result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def _render_like(gold: ScoredRollout[GoldOrigin], value: list[Any]) -> str:
    """``value`` (a list) written the way the proven gold wrote its own list (compact or spaced JSON, or "a, b")."""
    import json

    from hermes_envs.conformance._golds import structured_renderings

    proven_text = _final_text(gold)
    ours = structured_renderings("list", json.loads(str(gold.origin.value)))
    theirs = structured_renderings("list", value)
    for index, text in enumerate(ours):
        if index < len(theirs) and str(gold.origin.template).format(v=text) == proven_text:
            return str(gold.origin.template).format(v=theirs[index])
    return str(gold.origin.template).format(v=json.dumps(value))


def _hedges(gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]) -> list[tuple[str, str, str]]:
    """(kind, right-first reply, wrong-first reply) for a list gold: the right list with another item's entries
    added, in both orders; for a scalar gold in an answer shape: the right and a wrong answer, each in that shape.
    A scalar answer hedged in prose is left out: a grader that finds the answer's words anywhere in the reply
    (common, and counted correct) credits it by design, so it is no evidence."""
    import json

    template = str(gold.origin.template or "")
    if gold.origin.kind == "scalar" and template.strip() != "{v}" and twin.origin.value is not None:
        # Two committed answers, each in the answer shape (two <answer> tags, two "Answer:" lines): checked only
        # when the reward needs that shape (the same value in plain prose scores lower), so that a grader finding
        # the answer's words anywhere is never taken for one that reads several answers.
        right, wrong = template.format(v=gold.origin.value), template.format(v=twin.origin.value)
        return [
            (
                "the right answer and a wrong one, each in the answer shape",
                f"{right}\n{wrong}",
                f"{wrong}\n{right}",
            )
        ]
    if gold.origin.kind != "list":
        return []
    try:
        mine, theirs = json.loads(str(gold.origin.value)), json.loads(str(twin.origin.value))
    except ValueError:
        return []
    if not (isinstance(mine, list) and isinstance(theirs, list)):
        return []
    extra = [x for x in theirs if x not in mine]
    if not extra:
        return []
    return [
        (
            "the right list with another item's entries added",
            _render_like(gold, [*mine, *extra]),
            _render_like(gold, [*extra, *mine]),
        )
    ]


def _hedge_relation(
    s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]
) -> Finding | None:
    """Around a confirmed gold (the wrong value alone scores lower): the right answer hedged with the wrong one must
    not keep full credit in both orders. A reward that reads one committed answer (the first, the last, the only)
    scores one of the orders like the wrong answer; one that credits both credits the hedge itself. Both orders must
    score exactly the right answer's score: a reward that also pays for length scores the longer hedge higher, which
    is not this mistake."""
    for kind, right_first, wrong_first in _hedges(gold, twin):
        scripts = {
            "right answer": [{"content": _final_text(gold)}],
            "wrong answer": [{"content": str(gold.origin.template).format(v=twin.origin.value)}],
            "hedge, right first": [{"content": right_first}],
            "hedge, wrong first": [{"content": wrong_first}],
        }
        holds: tuple[tuple[str, str, Any], ...] = (
            ("wrong answer", "<", "right answer"),
            ("hedge, right first", "==", "right answer"),
            ("hedge, wrong first", "==", "right answer"),
        )
        if gold.origin.kind == "scalar":  # the reward needs the answer shape: plain prose scores lower
            prose = f"I believe it is {gold.origin.value}, not {twin.origin.value}."
            scripts["right value in prose"] = [{"content": prose}]
            holds = (*holds, ("right value in prose", "<", "right answer"))
        case = Case(
            rule="an answer that also names a wrong candidate scores below the right answer alone, in one order",
            item=gold.item,
            scripts=scripts,
            order=tuple(scripts),
            holds=holds,
        )
        run = run_case(s, case)
        if not run.violated:
            continue
        listed = (
            "a superset of the right list (extra entries, false positives) scores like the exact list: the reward "
            "measures recall without precision"
            if gold.origin.kind == "list" and "added" in kind
            else "the reward credits a reply that contains the right answer anywhere (a substring or 'any of' "
            "test, the best of several answers or answer tags, recall without precision)"
        )
        return _finding(
            case,
            run,
            f"a hedged answer should score below the right answer alone; on item {short(gold.item, 90)} the right "
            f"answer {short(_final_text(gold), 60)} scored {fmt_score(run.scores.get('right answer'))} and the wrong "
            f"{short(twin.origin.value, 40)} alone {fmt_score(run.scores.get('wrong answer'))}, yet {kind} (several answers, "
            f"in either order: {short(right_first, 80)} and {short(wrong_first, 80)}) kept the full score: "
            f"{listed}, so the policy learns to hedge (list several candidates or everything in sight) instead of "
            "committing to one answer. Every correct reward reads one committed answer, or penalises the wrong "
            "ones (precision), so at least one of the two orders scores lower.",
            "grade one committed answer (the last <answer> tag or answer line, and only if there is exactly one), "
            "compare it with the item's answer as a whole (equality after normalising, not `in`), and for set "
            "answers score F1 (precision and recall), not recall alone.",
            Severity.ERROR,
            "relation: a hedged answer",
        )
    return None


def _partial_relation(s: EnvSession, gold: ScoredRollout[GoldOrigin]) -> Finding | None:
    """Around a confirmed list gold whose order matters (the reversed list scores lower): the list with entries
    omitted must score lower too."""
    import json

    if gold.origin.kind != "list":
        return None
    try:
        mine = json.loads(str(gold.origin.value))
    except ValueError:
        return None
    if not isinstance(mine, list) or len(mine) < 3 or len({json.dumps(x) for x in mine}) < len(mine):
        return None
    partial, reverse = mine[:2], mine[::-1]
    case = Case(
        rule="an ordered answer with entries omitted scores below the complete answer",
        item=gold.item,
        scripts={
            "complete answer": [{"content": _final_text(gold)}],
            "reversed": [{"content": _render_like(gold, reverse)}],
            "partial": [{"content": _render_like(gold, partial)}],
        },
        order=("complete answer", "reversed", "partial"),
        holds=(("reversed", "<", "complete answer"), ("partial", ">=", "complete answer")),
    )
    run = run_case(s, case)
    if not run.violated:
        return None
    return _finding(
        case,
        run,
        f"an answer that omits entries should score below the complete one; on item {short(gold.item, 90)} the "
        f"complete list scored {fmt_score(run.scores.get('complete answer'))} and the same list reversed "
        f"{fmt_score(run.scores.get('reversed'))} (so order matters), yet a partial list of its first two entries, with "
        f"{len(mine) - 2} missing entities, kept the full score: the reward scores only the entries the answer "
        "names (a subset), so the policy learns to omit whatever it is unsure about.",
        "check the answer names every expected entity exactly once (a permutation of the item's list) before "
        "giving order credit, or count missing entities as wrong.",
        Severity.ERROR,
        "relation: a partial list",
    )


def _item_blind(s: EnvSession, gold: ScoredRollout[GoldOrigin], twin: ScoredRollout[TwinOrigin]) -> Finding:
    """The twin (another item's value, same shape) scored as well as the gold: the reward may ignore the item."""
    return Finding(
        "HC413",
        f"another item's answer should score below this item's own; written as {gold.origin.template!r}, "
        f"{twin.origin.value!r} (a wrong value for this item) scored {fmt_score(twin.score)} and {gold.origin.value!r} scored "
        f"{fmt_score(gold.score)} on item {short(gold.item, 90)} (a warning: the kit guessed that field "
        f"{gold.origin.field!r} is the answer; if it is not, ignore this).",
        "compare the reply with this item's own answer (read it from the `item` argument), so that a reply "
        "correct for another item earns nothing here.",
        Severity.WARNING,
        subject="relation: another item's answer",
    )


#: Verdicts the fake judge tries, in the shapes judges are usually told to answer in, until the reward accepts one.
JUDGE_VERDICTS = ("7", "Score: 7/10", '{"score": 7}', "<score>7</score>", "YES", "Rating: 7")


def _judge_memory_relation(s: EnvSession) -> Finding | None:
    """A reward that asks a judge must ask it about a reply new to THIS item, whatever other items were scored
    before: a reply judged for item B and then scored for item A must not reuse B's verdict (a cache keyed on the
    reply text alone). Evidence: the judge is asked about a fresh reply of the same shape on A, and about the reply
    on B, but not about the reply on A once B's verdict exists."""
    if not any(r.model_requests for r in s.observe(ScoredProbes).rollouts):
        return None
    env = s.env()
    items = probe_items(s)
    first = items[0]
    other = next(
        (i for i in items[1:] if format_prompt_of(env, i) != format_prompt_of(env, first)),
        None,
    )
    if other is None:
        return None
    for verdict, tag in zip(JUDGE_VERDICTS, ("amber", "birch", "cedar", "dune", "ember", "fjord")):
        fresh = f"In short: it is mainly about the harbour {tag} and what follows from it."
        shared = f"In short: it is mainly about the orchard {tag} and what follows from it."
        case = Case(
            rule="a reward asks its judge about a reply new to this item, whatever other items were judged before",
            item=first,
            scripts={
                "new reply": [{"content": fresh}],
                "reply, other item": [{"content": shared}],
                "same reply, this item": [{"content": shared}],
            },
            items={"reply, other item": other},
            order=("new reply", "reply, other item", "same reply, this item"),
            holds=(
                ("requests:new reply", ">=", 1),
                ("requests:reply, other item", ">=", 1),
                ("requests:same reply, this item", "==", 0),
            ),
            judge={
                name: {"content": verdict}
                for name in ("new reply", "reply, other item", "same reply, this item")
            },
        )
        run = run_case(s, case)
        if run.errors:
            continue  # the reward did not accept this verdict (nothing could be cached): try the next shape
        if not run.violated:
            return None
        return _finding(
            case,
            run,
            f"compute_reward should judge a reply against the item it is given; with the judge answering "
            f"{verdict!r}, it asked the judge about a new reply on item {short(first, 70)} and about {shared!r} on "
            f"item {short(other, 70)}, but NOT about that same text on the first item afterwards: it reused the "
            "verdict another item got for the same text. The reward caches verdicts by the reply text alone (the "
            "cache key leaves out the item), so the same words written for another item get the first item's "
            "stale score.",
            "key any verdict cache on the item and the text together (e.g. (item['id'], text)), or memoize "
            "nothing across compute_reward calls.",
            Severity.ERROR,
            "relation: a judge verdict reused for another item",
        )
    return None


@check(
    "HC413",
    "reward-relations",
    "the reward obeys the relations every correct reward obeys (metamorphic)",
    requires=(*SCORE_PREREQUISITES, "HC404"),
    why=(
        "A reward is a function of the item and the answer the model gave: a score that moves with what was scored "
        "before (a verdict cache keyed on the text alone), with the item get_next_item handed out last, with the "
        "model's unspoken thoughts, or that spins on a hostile reply trains on noise or stalls the run; one that "
        "keeps full credit for a hedged answer (several candidates, a superset), a partial list or a JSON answer "
        "with fields left out teaches the policy to hedge or omit; one that pays an unreadable reply more than a "
        "wrong one, or a piece of the answer as much as all of it, teaches broken or truncated output; one that "
        "scores another item's answer as well does not read the item."
    ),
    fix=(
        "Grade one committed final answer against this item's own answer (the `item` argument), keep no state "
        "between calls, score precision as well as recall, bound parsing."
    ),
)
def reward_relations(s: EnvSession) -> list[Finding]:
    """Rewards whose score changes under transformations that cannot matter to any correct reward (the same
    transcript after another item was scored or after get_next_item, a judge verdict reused for another item,
    thoughts around the answer, hostile long replies), rewards that keep full credit for a hedged answer, a
    partial list or a JSON answer with a graded field left out, and (a warning) rewards that score another item's answer as well as the item's own."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    findings: list[Finding] = []
    memory = _judge_memory_relation(s)
    if memory is not None:
        findings.append(memory)
    best = proven(s)
    if not best:
        if (
            nested := nested_field_relation(s)
        ) is not None:  # why no JSON gold was proven: unreadable nesting
            return [*findings, nested]
        if any(r.model_requests for r in s.observe(ScoredProbes).rollouts):
            return findings  # the judge relation ran; nothing else can without a proven transcript
        raise NotApplicable(
            "no transcript is known to score above the controls (see HC407), so there is nothing to transform"
        )
    found = s.observe(GoldProbes)
    items = probe_items(s)
    for entry in best if s.settings.thorough else best[:1]:
        others = [i for i in items if item_key(i) != item_key(entry.item)]
        if others:
            other_best = next((b for b in best if item_key(b.item) == item_key(others[0])), None)
            finding = _order_relation(s, entry, others[0], other_best)
            if finding is not None:
                findings.append(finding)
        moved = _next_item_relation(s, entry)
        if moved is not None:
            findings.append(moved)
        twin = found.twins.get(item_key(entry.item))
        if _field_gold(entry) and twin is not None:
            if found.confirmed(entry):
                findings += _answer_relations(s, entry, twin)
                if not entry.model_requests:  # a verdict of the kit's fake judge is no evidence
                    relations = (
                        _hedge_relation(s, entry, twin),
                        _partial_relation(s, entry),
                        omitted_field_relation(s, entry, twin),
                        unreadable_relation(s, entry, twin),
                        fragment_relation(s, entry, twin),
                    )
                    for relation in relations:
                        if relation is not None:
                            findings.append(relation)
            elif numeric(twin.score) and numeric(entry.score) and twin.score >= entry.score - 1e-9:
                findings.append(_item_blind(s, entry, twin))
        cost = cost_relation(s, entry.item)
        if cost is not None:
            findings.append(cost)
    return findings
