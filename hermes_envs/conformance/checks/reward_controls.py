"""HC406, HC407 — the reward's range: negative controls score under the ceiling, a correct answer above them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_envs.conformance._cases import Case, case_json, script_of
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._golds import derivable
from hermes_envs.conformance._observations.origin import ControlOrigin, EnvOrigin, Origin
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import (
    Controls,
    EnvTranscripts,
    GoldProbes,
    ItemControls,
    ScoredProbes,
    ScoredRollout,
    item_key,
    numeric,
)
from hermes_envs.conformance._probes import CONTROLS, PROBES
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.env._prompt import format_prompt_of


def _answers_in_prompt(s: EnvSession, items: list[Any]) -> str:
    """The proven (or answer-like) gold values of ``items`` as shown in their own prompts, when every item's prompt
    shows its answer as a word (an echo of the prompt then holds the answer by construction); else ``""``."""
    import re

    from hermes_envs.conformance._golds import scalar_fields

    env = s.env()
    proven = {item_key(e.item): e.origin.value for e in s.observe(GoldProbes).gold if e.origin.value}
    shown = []
    for item in items:
        try:
            prompt = format_prompt_of(env, item)
        except Exception:
            continue
        values = (
            [proven[item_key(item)]] if item_key(item) in proven else [v for _k, v in scalar_fields(item)[:1]]
        )
        hits = [
            repr(v)
            for v in values
            if isinstance(prompt, str) and re.search(rf"(?<![\w/]){re.escape(v)}(?![\w/])", prompt)
        ]
        if not hits:
            return ""
        shown += hits
    return ", ".join(sorted(set(shown))[:3])


def _control_case(entry: ScoredRollout[Origin] | None, ceiling: float) -> dict[str, Any] | None:
    """A negative control's best-scoring rollout as a replayable counterexample (its model turns played again)."""
    if entry is None:
        return None
    return case_json(
        Case(
            rule="a negative control (no work, no answer) scores at most control_ceiling",
            item=entry.item,
            scripts={"control": script_of(entry.result.messages)},
            order=("control",),
            holds=(("control", ">", ceiling),),
        )
    )


#: Why a reply with no answer at all earns credit: the two ways a reward finds something to pay for in nothing.
_NO_ANSWER_CAUSES = (
    " The reply holds no answer, so the credit came from something else: a bonus for finishing or for the format, "
    "a fallback that searches the whole conversation (the transcript, which includes the prompt and tool results) "
    "when the reply has no answer, or a score by the absence of failure (no failures reported because nothing ran: "
    "code that does not even import or crashes reports no failed case)."
)


def _doubt(scored: list[tuple[Any, float]], ceiling: float, good: dict[str, float] | None) -> str:
    """Why a control above the ceiling may still be a correct reward's doing (a warning), or "" (an error).

    A kit control is evidence when the credit is unconditional: it scores above the ceiling on every item. Where
    some item gives it nothing, doing nothing may be right on the others (a ticket that needs no refund). An env's
    own bad transcript is evidence when it scores as high as the env's own good one for that item; below that it
    may be the partial credit the env means to give.
    """
    if good is not None:
        compared = [(score, good[item_key(item)]) for item, score in scored if item_key(item) in good]
        if compared and all(score < best for score, best in compared):
            top = max(best for _score, best in compared)
            return f"a warning: it scores below the env's own good transcript ({top:g}), so it may be partial credit"
        if compared:
            return ""
    low_item, low = min(scored, key=lambda pair: pair[1])
    if low <= ceiling:
        return (
            f"a warning: on item {short(low_item, 60)} it scored {low:g}, so the credit depends on the item; doing "
            "nothing may be the right answer to some tasks"
        )
    return ""


@check(
    "HC406",
    "controls-low",
    "negative controls score under the ceiling",
    requires=SCORE_PREREQUISITES,
    why="If doing nothing, refusing or echoing earns credit, the policy learns that instead of the task.",
    fix="Reward evidence of success only; keep the answer out of the prompt.",
)
def controls_low(s: EnvSession) -> list[Finding]:
    """A reward too lenient: doing nothing, refusing, echoing the prompt or spamming tools earns credit."""
    ceiling = s.settings.control_ceiling
    per_control: dict[str, list[float]] = {}
    per_item: dict[str, list[tuple[Any, float]]] = {}  # (item, score): what the severity is decided on
    examples: dict[str, Any] = {}
    worst: dict[
        str, ScoredRollout[Origin]
    ] = {}  # the control's highest-scoring rollout: its replayable counterexample
    for entry in s.observe(ScoredProbes).rollouts:
        if entry.origin.probe in CONTROLS and numeric(entry.score):
            per_control.setdefault(entry.origin.probe, []).append(float(entry.score))
            per_item.setdefault(entry.origin.probe, []).append((entry.item, float(entry.score)))
            examples.setdefault(entry.origin.probe, entry.item)
            if entry.origin.probe not in worst or entry.score > worst[entry.origin.probe].score:
                worst[entry.origin.probe] = entry
    abouts: dict[str, str] = {}
    negatives: list[ScoredRollout[EnvOrigin | ControlOrigin]] = [
        *s.observe(EnvTranscripts).bad,
        *s.observe(ItemControls).rollouts,
    ]
    for negative in negatives:
        name = negative.origin.name
        if numeric(negative.score):
            per_control.setdefault(name, []).append(float(negative.score))
            per_item.setdefault(name, []).append((negative.item, float(negative.score)))
            examples.setdefault(name, negative.item)
            origin = negative.origin
            abouts[name] = (
                origin.about if isinstance(origin, ControlOrigin) else "a transcript the env itself calls bad"
            )
            if name not in worst or negative.score > worst[name].score:
                worst[name] = negative
    good_scores: dict[str, float] = {}
    for good in s.observe(EnvTranscripts).good:
        if numeric(good.score):
            key = item_key(good.item)
            good_scores[key] = max(good_scores.get(key, float("-inf")), float(good.score))
    findings = []
    for name, scores in per_control.items():
        mean = sum(scores) / len(scores)
        if mean > ceiling:
            about = PROBES[name][2] if name in PROBES else abouts[name]
            in_prompt = _answers_in_prompt(
                s,
                [
                    e.item
                    for e in s.observe(ScoredProbes).rollouts
                    if e.origin.probe == name and numeric(e.score) and e.score > ceiling
                ],
            )
            if name == "echo_prompt" and in_prompt:
                findings.append(
                    Finding(
                        "HC406",
                        f"a negative control should score at most {ceiling:g} (control_ceiling); {name!r} ({about}) "
                        f"got a mean of {mean:.3g} because the prompt itself holds the answer ({in_prompt}), and "
                        "the reward takes the answer from anywhere in the reply (a warning: with the answer in the "
                        "prompt, an echo is no pure negative control; HC302 says whether it leaked).",
                        "read the answer from a marked place (the last 'Answer:' line, a <answer> tag) so that "
                        "repeating the question or the options earns nothing.",
                        Severity.WARNING,
                        subject=f"control {name}",
                    )
                )
                continue
            judged = worst.get(name) is not None and worst[name].model_requests > 0
            if judged:
                # The reward asked a model (a judge) for this score, and that model is the kit's fake: the credit
                # may be the env's fallback for a judge that gave no verdict, not what a real judge would say.
                findings.append(
                    Finding(
                        "HC406",
                        f"a negative control should score at most {ceiling:g} (control_ceiling); {name!r} ({about}) "
                        f"got a mean of {mean:.3g}, scored through a judge the kit fakes (a warning: the credit may "
                        "come from the reward's fallback for a judge without a verdict).",
                        "make the fallback for a failed or unparseable judge give no credit (or only for evidence "
                        "the reward checks itself), never credit for length or for answering at all.",
                        Severity.WARNING,
                        subject=f"control {name}",
                    )
                )
                continue
            doubt = _doubt(per_item[name], ceiling, good_scores if name in abouts else None)
            findings.append(
                Finding(
                    "HC406",
                    f"a negative control should score at most {ceiling:g} (control_ceiling); {name!r} ({about}) got a "
                    f"mean of {mean:.3g} over {len(scores)} item(s), e.g. on item {short(examples[name], 120)}"
                    + (f" ({doubt})." if doubt else ".")
                    + (_NO_ANSWER_CAUSES if name in ("empty_reply", "refusal") and not doubt else ""),
                    "give credit only for evidence of success (the right answer, the file actually written); drop "
                    "partial credit for finishing, formatting or calling tools, and never put the answer in the "
                    "prompt (an echo of the prompt must not be correct).",
                    Severity.WARNING if doubt else Severity.ERROR,
                    subject=f"control {name}",
                    counterexample=None if doubt else _control_case(worst.get(name), ceiling),
                )
            )
    return findings


@check(
    "HC407",
    "reward-varies",
    "a correct answer scores above the controls (the reward can vary)",
    requires=SCORE_PREREQUISITES,
    why=(
        "If no answer can score above the controls, every group has equal scores and "
        "ensure_scores_are_not_same drops it: nothing is learned."
    ),
    fix="Compare like with like; or ship conformance_transcripts() proving a good rollout scores higher.",
)
def reward_varies(s: EnvSession) -> list[Finding]:
    """A reward that never rewards a correct answer (type mismatch, wrong field): every group gets the same score
    and ``ensure_scores_are_not_same`` drops it, so nothing is learned."""
    found = s.observe(GoldProbes)
    own = s.observe(EnvTranscripts)
    findings = []
    if own.error:
        findings.append(
            Finding(
                "HC407",
                f"the env's example transcripts should load; {own.error}.",
                "return {'good': [[turn, ...], ...], 'bad': [...]} (see docs/checks.md).",
            )
        )
    controls = s.observe(Controls)
    for entry in own.good:
        best = controls.best(entry.item, s.settings.control_ceiling)
        if not (numeric(entry.score) and entry.score > best[1]):
            findings.append(
                Finding(
                    "HC407",
                    f"{entry.origin.name} should score above every control; got {entry.score!r} (control "
                    f"{best[0]!r} scored {best[1]:g}) on item {short(entry.item, 120)}.",
                    "fix the reward (or the transcript): a known-good rollout must earn more than doing nothing.",
                    subject=entry.label,
                )
            )
    proved = {item_key(e.item) for e in found.gold} | {
        item_key(e.item)
        for e in own.good
        if numeric(e.score) and e.score > controls.best(e.item, s.settings.control_ceiling)[1]
    }
    items = probe_items(s)
    missing = [item for item in items if item_key(item) not in proved]
    if not missing or findings:
        return findings
    all_scores = sorted(
        {round(float(e.score), 6) for e in s.observe(ScoredProbes).rollouts if numeric(e.score)}
    )
    item = missing[0]
    tried: Sequence[str] = found.tried.get(item_key(item), [])
    answer_like = derivable(item)
    constant = f" every probe scored {all_scores[0]:g}," if len(all_scores) == 1 else ""
    message = (
        f"a correct answer should score above the controls;{constant} none of the {len(tried)} gold-answer "
        f"probes ({', '.join(tried[:3])}{', ...' if len(tried) > 3 else ''}) beat the best control on item "
        f"{short(item, 160)}."
    )
    fix = (
        "compare like with like (str(item['answer']) vs the parsed text, strip and normalise both) and check "
        "the reward reads the field that holds the answer; if your answers cannot be derived from the item, "
        "ship known-good transcripts with `def conformance_transcripts(self, item)` (docs/checks.md)."
    )
    if not (answer_like or own.good):
        # "every probe scored 0" then says the probes found no correct answer, not that the reward is wrong.
        raise NotApplicable(
            f"no correct answer could be derived for item {short(item, 120)} (no answer-like field the "
            f"{len(tried)} gold-answer probes could use, no conformance_transcripts()); ship known-good "
            "transcripts with `def conformance_transcripts(self, item)` to have the reward's range checked"
        )
    # The gold-answer probes are the kit's guess at a correct answer (which field, which shape); that none of them
    # beat the controls is evidence about the guess as much as about the reward: a warning, never an error. Only
    # the env's own known-good transcripts failing (above) is the env contradicting itself: an error.
    findings.append(
        Finding(
            "HC407",
            message[:-1]
            + " (a warning: these answers are the kit's guess from the item's fields; a task whose "
            "answer is a file, a script or a judgement may score them 0 correctly).",
            fix,
            Severity.WARNING,
            subject="gold-answer probes",
        )
    )
    return findings
