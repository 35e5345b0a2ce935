"""HC506 — a judge outage: the reward's own model requests fail while a reply with no answer is scored.

A reward that asks a model (a judge) has no verdict when that request fails. A correct reward then raises, drops
the rollout, or falls back to checks it makes itself; it never invents a verdict. A refusal (a reply with nothing
to judge) is the witness: whatever the reward's own checks give it, an outage cannot give it more than the
judge's own answer would, and never more than a negative control may earn. The transcript is scored as it is (no
model turn is played again), so every request made while it is scored is the reward's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_envs.conformance._cases import Case, CaseRun, case_json, run_case
from hermes_envs.conformance._findings import Finding, NotApplicable
from hermes_envs.conformance._observations.origin import Origin
from hermes_envs.conformance._observations.scoring import (
    ScoredProbes,
    ScoredRollout,
    item_key,
    numeric,
)
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.faults import group_scores

#: The HTTP status every judge request gets in the outage: a server error, the commonest outage.
OUTAGE_STATUS = 500
#: The fake judge's replies the outage is compared with: an answer in no verdict format, and the lowest verdict
#: of a numeric scale. The outage must not pay more than the lower of the two the reward turns into a score.
JUDGE_ANSWERS = {
    "judge answers off-format": {"content": "I don't know."},
    "judge answers 0": {"content": "0"},
}
DOWN = "judge down"
#: The probes that are replies with no answer (the controls' refusal and empty reply).
NO_ANSWER = ("refusal", "empty_reply")


def _witnesses(s: EnvSession) -> list[ScoredRollout[Origin]]:
    """The kit's no-answer rollouts (refusal, empty reply) whose scoring asked a model; one per item. Not the env's
    own bad transcripts: a wrong answer may earn partial credit from the reward's own checks, a refusal never."""
    found: list[ScoredRollout[Origin]] = []
    seen: set[str] = set()
    for entry in s.observe(ScoredProbes).rollouts:
        if entry.origin.probe not in NO_ANSWER or entry.model_requests <= 0 or item_key(entry.item) in seen:
            continue
        seen.add(item_key(entry.item))
        found.append(entry)
    return found


def _case(entry: ScoredRollout[Origin], ceiling: float, compared: str | None) -> Case:
    messages = [dict(m) for m in entry.result.messages]
    holds: tuple[tuple[str, str, Any], ...] = ((DOWN, ">", ceiling),)
    if compared is not None:
        holds += ((DOWN, ">", compared),)
    return Case(
        rule="a judge outage gives a reply with no answer no more credit than the judge's own answer would, "
        "and no more than control_ceiling",
        item=entry.item,
        scripts={name: messages for name in (DOWN, *JUDGE_ANSWERS)},
        order=(DOWN, *JUDGE_ANSWERS),
        holds=holds,
        judge={DOWN: {"content": "", "fault": OUTAGE_STATUS}, **JUDGE_ANSWERS},
    )


def _lowest_answered(run: CaseRun) -> str | None:
    """The fake judge's answer the reward turned into the lowest score (None when it scored none of them)."""
    answered = [(float(run.scores[n]), n) for n in JUDGE_ANSWERS if numeric(run.scores.get(n))]
    return min(answered)[1] if answered else None


@check(
    "HC506",
    "judge-outage",
    "a judge outage earns a reply with no answer no credit (the reward's judge requests fail)",
    # Not HC401-HC403 (agent-only: a raw env's judge runs in collect_trajectories); a reward that raises gives
    # no witness here anyway.
    requires=("HC201",),
    why=(
        "A reward that invents a score when its judge fails (0.5 'neutral', every rubric point met) pays every "
        "rollout during an outage, refusals included: the policy trains on noise and nothing counts the failures."
    ),
    fix=(
        "Let the judge's error propagate (the rollout is dropped and counted) or fall back only to checks the "
        "reward makes itself; never return a fixed score or assume rubric points met when the judge call failed."
    ),
)
def judge_outage(s: EnvSession) -> list[Finding]:
    """A reward that catches a failed judge call and returns a made-up score (0.5 "neutral", every rubric point
    met, full marks "to keep the run going"): during an outage every rollout, a refusal included, earns that
    score, the policy trains on noise, and nothing counts the failures. Seen on a refusal scored with every
    judge request failing (HTTP 500), against the same refusal scored with the judge answering; on a raw
    atroposlib env, a group of refusals collected while every request quoting the refusal (the judge's) fails."""
    if not s.is_hermes_env():
        return _raw_judge_outage(s)
    witnesses = _witnesses(s)
    if not witnesses:
        raise NotApplicable("the reward asked no model (no judge) while it scored a reply with no answer")
    ceiling = s.settings.control_ceiling
    for entry in witnesses[:2]:
        first = run_case(s, _case(entry, ceiling, None))
        down = first.scores.get(DOWN)
        if not numeric(down) or float(down) <= ceiling:
            continue  # raised, or no credit: right
        compared = _lowest_answered(first)
        if compared is not None and float(down) <= float(first.scores[compared]) + 1e-9:
            continue  # the refusal earns that much with a judge too: HC406's subject, not the outage's
        case = _case(entry, ceiling, compared)
        # The first run is the evidence (the outage scored first, before any verdict the reward may cache): it is
        # not run again in this session, which would read such a cache; a fresh `hermes-envs replay` does not.

        versus = (
            f"; with the judge answering, the same reply scored {_lowest_score(first, compared)}"
            if compared is not None
            else "; with the judge answering (off-format, or '0') the reward gave it no score at all"
        )
        return [
            Finding(
                "HC506",
                f"compute_reward should raise, or give no credit, when its judge fails; with every judge request "
                f"failing (HTTP {OUTAGE_STATUS}, a judge outage) it scored {entry.label} — a reply with no answer "
                f"— {float(first.scores[DOWN]):g} on item {short(entry.item, 100)}, above control_ceiling "
                f"{ceiling:g}{versus}. The reward invents a score when the judge fails (a neutral or "
                f"benefit-of-the-doubt fallback): during an outage every rollout earns it and no error is counted. "
                f"Scores: {first.describe()}.",
                "let the judge's error propagate (the rollout is dropped and counted), or fall back only to checks "
                "the reward makes itself, which a reply with no answer fails; never return a fixed score or count "
                "rubric points as met when the judge call raised or its reply could not be parsed.",
                subject=f"{entry.label}, judge down",
                counterexample=case_json(case),
            )
        ]
    return []


def _lowest_score(run: CaseRun, name: str | None) -> str:
    score = run.scores.get(name or "")
    return f"{float(score):g} ({name})" if numeric(score) else "no score"


#: The raw env's rollouts answer with this refusal; a request that quotes it in a fresh conversation is a judge's.
RAW_REFUSAL = "I'm sorry, but I can't help with that (ref 7Q2)."


def _quotes_refusal(body: dict[str, Any]) -> bool:
    """Whether a request's prompt or messages quote the rollouts' refusal."""
    texts = [str(body.get("prompt") or "")]
    texts += [str(m.get("content") or "") for m in body.get("messages") or [] if isinstance(m, dict)]
    return any(RAW_REFUSAL in text for text in texts)


def _raw_responder(judge: Mapping[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Every rollout request answered with the refusal (one per choice); every judge request with ``judge``."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        fresh = not any(m.get("role") in ("assistant", "tool") for m in messages)
        if _quotes_refusal(body) and (fresh or body.get("prompt")):
            return dict(judge)
        return {"choices": [{"content": RAW_REFUSAL} for _ in range(max(1, int(body.get("n") or 1)))]}

    return respond


def _raw_group(s: EnvSession, item: Any, judge: Mapping[str, Any], phase: str) -> tuple[float | None, int]:
    """(the best score of ``collect_trajectories(item)``'s group of refusals, None when it raised or returned no
    scores; how many judge requests it made)."""
    with s.sandbox_leaks(), s.responding(_raw_responder(judge)) as made:
        try:
            group, _backlog = s.run_env(lambda e: e.collect_trajectories(item), timeout=120, phase=phase)
        except Exception:
            group = None
    judged = sum(1 for c in made if _quotes_refusal(c.body))
    scores = [x for x in group_scores(group) if numeric(x)]
    return (max(float(x) for x in scores) if scores else None), judged


def _raw_judge_outage(s: EnvSession) -> list[Finding]:
    """HC506 on a raw env: its judge runs inside collect_trajectories, asked about the rollouts' replies."""
    from hermes_envs.conformance._observations.rollouts import probe_items
    from hermes_envs.conformance.checks.trajectory import eval_only

    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item = probe_items(s)[0]
    ceiling = s.settings.control_ceiling
    down, judged = _raw_group(s, item, {"content": "", "fault": OUTAGE_STATUS}, "judge-outage")
    if not judged:
        raise NotApplicable("collect_trajectories asked no model about its rollouts' replies (no judge)")
    if down is None or down <= ceiling:
        return []  # raised, dropped the group, or gave no credit: right
    answered = {name: _raw_group(s, item, reply, "judge-answers")[0] for name, reply in JUDGE_ANSWERS.items()}
    numbers = {k: v for k, v in answered.items() if v is not None}
    lowest = min(numbers.items(), key=lambda kv: kv[1]) if numbers else None
    if lowest is not None and down <= lowest[1] + 1e-9:
        return []  # the refusals earn that much with a judge too: HC406's subject, not the outage's
    versus = (
        f"; with the judge answering, the same refusals scored at most {lowest[1]:g} ({lowest[0]})"
        if lowest is not None
        else "; with the judge answering (off-format, or '0') the group was not scored at all"
    )
    return [
        Finding(
            "HC506",
            f"collect_trajectories should raise, drop the group, or give no credit when its judge fails; with every "
            f"judge request failing (HTTP {OUTAGE_STATUS}, a judge outage; {judged} request(s) quoting the reply) "
            f"a group of refusals ({RAW_REFUSAL!r}) scored up to {down:g} on item {short(item, 100)}, above "
            f"control_ceiling {ceiling:g}{versus}. The env invents a score when the judge fails (a neutral or "
            "benefit-of-the-doubt fallback): during an outage every rollout earns it and no error is counted.",
            "let the judge's error propagate, or return None for the group; never score a rollout with a fixed "
            "value when the judge call raised or its reply could not be parsed.",
            subject="group of refusals, judge down",
        )
    ]
