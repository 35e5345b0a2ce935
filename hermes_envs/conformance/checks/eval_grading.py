"""HC713 — evaluate() credits what training credits: eval items answered the way the training reward scores as
right must not be reported exactly as if every item had been answered wrongly.

An evaluate() that grades with its own code (an exact string match, another answer format, another field) instead
of the training reward can count every answer training rewards as wrong: the eval curve then measures something
the policy is not trained on. The kit needs no knowledge of the task to see it. It takes the answer shape the
training reward was proven to credit on training items (a field of the item written as "Answer: {v}" ...), writes
each eval item's own value in it, keeps the eval items where training scores that reply above the same shape with
a wrong value, then runs evaluate() twice: once with those replies, once with every item answered "I don't know.".
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._env_state import State
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._golds import ANSWER_FORMATS, STRUCTURED_FORMATS, gold_value
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.origin import CheckOrigin
from hermes_envs.conformance._observations.rollouts import run_probe
from hermes_envs.conformance._observations.scoring import (
    GoldProbes,
    ScoredRollout,
    numeric,
    score_rollout,
    wrong_value,
)
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._probes import say
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance.checks.faults import (
    WRONG_ANSWER,
    EvalRun,
    WrongAnswerEval,
    describe_eval_run,
    eval_run,
)
from hermes_envs.env._prompt import format_prompt_of

#: Eval items whose gold reply is checked with the training reward (each costs three scored rollouts) and, when
#: evaluate() credits the gold run in part only, run alone through evaluate() (one more run each).
MAX_EVAL_ITEMS = 8
#: How many entries of one env attribute are tried as eval items (their prompts built and compared).
MAX_CANDIDATES = 2000
#: Metric names that say the eval measures correctness (an error needs one: a report of lengths or turn counts
#: alone is not a grade).
SCORE_WORDS = (
    "acc",
    "score",
    "reward",
    "correct",
    "pass",
    "success",
    "solve",
    "win",
    "match",
    "f1",
    "exact",
    "em",
)


@dataclass(frozen=True)
class EvalGold:
    """An eval item, the reply training scores best for it, and whether the same shape with a wrong value scored
    lower (the env confirming the kit's guess)."""

    prompt: str
    reply: str
    score: float
    below: float
    confirmed: bool


def _candidates(value: Any, kind: type) -> Iterator[Any]:
    """Entries of an env attribute that may be eval items: a list / tuple (or a datasets.Dataset) of ``kind``."""
    rows: Iterable[Any]
    if isinstance(value, (list, tuple)):
        rows = value[:MAX_CANDIDATES]
    elif all(hasattr(value, a) for a in ("column_names", "__len__", "__getitem__")):
        rows = (value[i] for i in range(min(len(value), MAX_CANDIDATES)))
    else:
        return
    for row in rows:
        if not isinstance(row, kind):
            return
        yield row


def _prompt(env: Any, item: Any) -> str | None:
    try:
        prompt = format_prompt_of(env, item)
    except Exception:
        return None
    if asyncio.iscoroutine(prompt):
        prompt.close()
        return None
    return prompt if isinstance(prompt, str) else None


def eval_items(s: EnvSession, prompts: tuple[str, ...]) -> dict[str, Any]:
    """The eval items behind ``prompts`` (what evaluate() asked): those it handed compute_reward, else entries of
    the env's own lists whose format_prompt is one of them."""
    env = s.env()
    wanted = set(prompts)
    found: dict[str, Any] = {}

    def offer(item: Any) -> None:
        prompt = _prompt(env, item)
        if prompt in wanted and prompt not in found:
            found[prompt] = item

    for item in s.observe(EvalObservation).scored_items:
        offer(item)
    training = s.observe(TrainingScan).items
    kind = type(training[0]) if training else dict
    for value in list(vars(env).values()):
        if len(found) == len(wanted):
            break
        for item in _candidates(value, kind):
            offer(item)
    return found


def _score(s: EnvSession, item: Any, reply: str, name: str) -> ScoredRollout[CheckOrigin]:
    result, task_id = run_probe(s, item, say(reply), 3, "eval-gold", "gold")
    return score_rollout(s, item, result, task_id, CheckOrigin(name), "gold")


def _best_template(
    s: EnvSession, items: dict[str, Any], field: str, kind: str, proven: str | None
) -> str | None:
    """The answer shape of the proven gold's kind that training scores best on the first eval item with a value
    (a shape the reward gives partial credit would make a stricter eval look wrong); the ``proven`` shape is
    among them (one the prompt asked for, such as a ```sql fence, is in no common list)."""
    templates = [t for _s, t in (STRUCTURED_FORMATS if kind in ("dict", "list") else ANSWER_FORMATS)]
    if proven and proven not in templates:
        templates.append(proven)
    for item in items.values():
        value = gold_value(item, field, kind)
        if not value:
            continue
        scored = [(t, _score(s, item, t.format(v=value), "the eval item's gold")) for t in templates]
        usable = [(t, e) for t, e in scored if numeric(e.score) and not e.model_requests]
        return max(usable, key=lambda te: float(te[1].score))[0] if usable else None
    return None


@dataclass(frozen=True)
class GoldAnswerEval:
    """evaluate() run once with every eval item answered in the answer shape the training reward was proven to
    credit, written with the item's own value (the kit's guess at a right answer; :func:`eval_golds` checks it).

    ``replies``: eval prompt -> reply; ``asked``: the prompts given a reply; ``other``: first user messages that
    are no eval prompt (a judge); ``before`` / ``after``: the env's plain state around the run (HC714)."""

    field: str
    template: str
    kind: str
    items: dict[str, Any]
    replies: dict[str, str]
    run: EvalRun
    asked: tuple[str, ...]
    other: tuple[str, ...]
    before: State
    after: State

    @classmethod
    def build(cls, s: EnvSession) -> GoldAnswerEval:
        if not s.is_hermes_env():
            raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
        observed = s.observe(EvalObservation)
        if observed.error is not None or not observed.prompts:
            raise Skip("evaluate() raised or sent no chat prompt to the model (see HC202)")
        proven = next(
            (g.origin for g in s.observe(GoldProbes).gold if g.origin.source == "field" and g.origin.field),
            None,
        )
        if proven is None or proven.field is None:
            raise NotApplicable("no answer shape was proven on the training items (see HC407)")
        items = eval_items(s, observed.prompts)
        if not items:
            raise NotApplicable(
                "no eval item behind evaluate()'s prompts was found on the env (its own lists)"
            )
        template = _best_template(s, items, proven.field, proven.kind, proven.template)
        if template is None:
            raise NotApplicable("no eval item has a value of the field the training answers were proven on")
        replies = {
            prompt: template.format(v=value)
            for prompt, item in items.items()
            if (value := gold_value(item, proven.field, proven.kind))
        }
        asked: list[str] = []
        other: list[str] = []
        before = State.of(s.env())
        run = eval_run(s, _answering(replies, set(observed.prompts), asked, other), "evaluate-eval-golds")
        after = State.of(s.env())
        # The wrong-answer run right after this one, nothing scored in between: a state evaluate() moves (a
        # curriculum level) then moves one way or the other even at a bound (HC714).
        s.observe(WrongAnswerEval)
        return cls(
            proven.field,
            template,
            proven.kind,
            items,
            replies,
            run,
            tuple(asked),
            tuple(other),
            before,
            after,
        )


def eval_golds(s: EnvSession, found: GoldAnswerEval) -> list[EvalGold]:
    """Up to MAX_EVAL_ITEMS of the gold run's replies, kept when training scores them above "I don't know." with
    no judge asked (a fake judge's verdict proves nothing); confirmed when the same shape with a wrong value scores
    lower too."""
    training = list(s.observe(TrainingScan).items)
    out: list[EvalGold] = []
    for prompt, reply in found.replies.items():
        if len(out) >= MAX_EVAL_ITEMS:
            break
        item = found.items[prompt]
        gold = _score(s, item, reply, "the eval item's gold")
        idk = _score(s, item, WRONG_ANSWER, "I don't know")
        if gold.model_requests or not numeric(gold.score) or not numeric(idk.score):
            continue
        if float(idk.score) >= float(gold.score) - 1e-9:
            continue
        value = gold_value(item, found.field, found.kind)
        wrong = wrong_value(value, found.field, item, training)
        twin = _score(s, item, found.template.format(v=wrong), "a wrong value") if wrong is not None else None
        confirmed = twin is not None and numeric(twin.score) and float(twin.score) < float(gold.score) - 1e-9
        out.append(EvalGold(prompt, reply, float(gold.score), float(idk.score), confirmed))
    return out


def _answering(replies: dict[str, str], prompts: set[str], asked: list[str], other: list[str]) -> Any:
    """The fake model of the gold run: an eval item's gold reply to its conversation, "I don't know." elsewhere;
    notes which gold prompts were asked and what was asked that is no eval prompt (a judge)."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        users = [m.get("content") for m in body.get("messages") or [] if m.get("role") == "user"]
        first = users[0] if users and isinstance(users[0], str) else ""
        if first in replies:
            asked.append(first)
        elif first not in prompts:
            other.append(first[:120])
        n = max(1, int(body.get("n") or 1))
        return {"choices": [{"content": replies.get(first, WRONG_ANSWER)} for _ in range(n)]}

    return respond


def _grades(run: EvalRun) -> bool:
    """Whether the run reported a metric named like a grade (accuracy, score, reward, pass rate ...)."""
    names: list[str] = []
    for report in (*run.metrics, run.returned, *run.wandb):
        if isinstance(report, dict):
            names += [str(k).lower() for k in report]
    return any(word in name for name in names for word in SCORE_WORDS)


def _full_marks(run: EvalRun) -> bool:
    """Whether the run reported a grade-named rate at its top (1.0, or 100 for a percentage): every item was
    credited, so there is no partial credit to look for item by item."""
    for report in (*run.metrics, run.returned, *run.wandb):
        if not isinstance(report, dict):
            continue
        for name, value in report.items():
            lowered = str(name).lower()
            if not any(word in lowered for word in SCORE_WORDS) or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) and float(value) in (1.0, 100.0):
                return True
    return False


FIX = (
    "grade eval rollouts with the training reward (`await self.score_rollout(item, result, task_id)` or "
    "compute_reward), or make the eval grader accept what compute_reward accepts (same parsing, tolerance, field)."
)


def _grades_with_reward(s: EnvSession, found: GoldAnswerEval) -> bool:
    """Whether evaluate() handed the eval items it asked about to compute_reward (directly or via score_rollout)."""
    observed = s.observe(EvalObservation)
    env = s.env()
    scored = {_prompt(env, item) for item in observed.scored_items}
    return bool(found.asked) and set(found.asked) <= scored


def _alone(s: EnvSession, found: GoldAnswerEval, gold: EvalGold) -> EvalRun | None:
    """evaluate() with only ``gold``'s item answered with its gold reply (every other item "I don't know."); None
    when that item was not asked about."""
    asked: list[str] = []
    other: list[str] = []
    responder = _answering({gold.prompt: gold.reply}, set(found.replies), asked, other)
    run = eval_run(s, responder, "evaluate-eval-golds")
    return run if run.error is None and asked and not other else None


def _uncredited_items(
    s: EnvSession, found: GoldAnswerEval, golds: list[EvalGold], baseline: EvalRun
) -> list[Finding]:
    """evaluate() credited the gold run in part: each confirmed gold run alone must move its report too. An error
    needs a contrast: another item's gold, alone, did move it (so one item's credit is visible in the report)."""
    seen: list[tuple[EvalGold, bool]] = []
    for gold in (g for g in golds if g.confirmed):
        run = _alone(s, found, gold)
        if run is not None:
            seen.append((gold, run.report() != baseline.report()))
    credited = [g for g, moved in seen if moved]
    missed = [g for g, moved in seen if not moved]
    if not credited or not missed:
        return []
    bad, good = missed[0], credited[0]
    message = (
        f"evaluate() should credit answers the training reward credits; the eval item {bad.prompt[:90]!r} answered "
        f"{bad.reply[:80]!r} (compute_reward: {bad.score:g}; {bad.below:g} for {WRONG_ANSWER!r}, and less for the "
        f"same shape with a wrong value) was reported exactly as if answered {WRONG_ANSWER!r}, while "
        f"{good.reply[:60]!r} for {good.prompt[:60]!r} alone did move the report: {len(missed)} of {len(seen)} "
        "eval items tried are graded right by training and wrong by evaluate() (a stricter match, rounding, "
        "another field). Eval accuracy is not the quantity being trained."
    )
    return [Finding("HC713", message, FIX, subject=f"eval item {bad.prompt[:80]!r}")]


@check(
    "HC713",
    "eval-credits-training-answers",
    "evaluate() credits the answers the training reward credits",
    requires=("HC703",),
    why=(
        "An evaluate() that grades with its own code (an exact match, another answer format or field) can count "
        "every answer training rewards as wrong: the eval curve then measures a task the policy is not trained on."
    ),
    fix="Score eval rollouts with the training reward: `await self.score_rollout(item, result, task_id)`.",
)
def eval_credits_training_answers(s: EnvSession) -> list[Finding]:
    """An evaluate() whose grading rejects what compute_reward accepts (exact equality where training converts and
    allows a tolerance, another answer format or field): eval items answered the way training scores as right are
    reported exactly as when every item is answered "I don't know."."""
    found = s.observe(GoldAnswerEval)
    run = found.run
    if run.error is not None or not found.asked:
        raise Skip(
            "evaluate() raised, or did not ask about the eval items given gold replies, in the gold run"
        )
    if found.other:
        raise Skip(
            f"evaluate() also asked the model something that is no eval prompt (a judge?): {found.other[0]!r}"
        )
    golds = [g for g in eval_golds(s, found) if g.prompt in found.asked]
    if not golds:
        raise NotApplicable('no eval item got a reply the training reward scores above "I don\'t know."')
    if _grades_with_reward(s, found):
        # evaluate() scores with compute_reward itself: counting only full credit (`reward == 1.0`) is a sound
        # eval, so a gold the reward does not give exactly 1.0 is the reward's to fix (HC403, HC407), not eval's.
        golds = [g for g in golds if abs(g.score - 1.0) <= 1e-9]
        if not golds:
            raise Skip(
                "evaluate() grades with compute_reward, and compute_reward does not give the eval items' golds "
                "full credit (1.0); a threshold at full credit is then sound (the reward's own checks judge it)"
            )
    baseline = s.observe(WrongAnswerEval).run
    if baseline.error is not None or not baseline.requests:
        raise Skip("evaluate() raised or asked nothing with a model that answers (HC202/HC707 report it)")
    if run.report() != baseline.report():
        # A grade at its top says every item was credited; each item alone is run only otherwise (up to 8 more
        # evaluate() runs, the costliest part of the check).
        return [] if _full_marks(run) else _uncredited_items(s, found, golds, baseline)
    example = golds[0]
    confirmed = any(g.confirmed for g in golds) and _grades(run)
    message = (
        f"evaluate() should credit answers the training reward credits; {len(set(found.asked))} eval item(s) were "
        f"answered in the shape training credits (e.g. {example.reply[:80]!r}: compute_reward gives "
        f"{example.score:g}, and {example.below:g} to {WRONG_ANSWER!r}), and evaluate() reported exactly what it "
        f"reports when every item is answered {WRONG_ANSWER!r}: {describe_eval_run(run)}. Eval grades something "
        "training does not reward."
    )
    if not confirmed:
        message += (
            " A warning: the kit's answer is its guess from the item's fields"
            + ("" if _grades(run) else ", and no metric is named like a grade")
            + "."
        )
    fix = FIX
    severity = Severity.ERROR if confirmed else Severity.WARNING
    return [Finding("HC713", message, fix, severity, subject=f"eval item {example.prompt[:80]!r}")]
