"""HC401, HC402, HC403, HC405 — the reward's contract: ``compute_reward`` reads AgentResult as an object, never
raises, returns a float in [0, 1] and leaves the messages and the item as they were."""

from __future__ import annotations

import math
import traceback
from collections.abc import Iterator
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._observations.group import CollectedGroup
from hermes_envs.conformance._observations.origin import Origin, ProbeOrigin
from hermes_envs.conformance._observations.scoring import (
    EnvTranscripts,
    GoldProbes,
    ScoredProbes,
    ScoredRollout,
    numeric,
)
from hermes_envs.conformance._probes import PROBES, ContractViolation
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short


def _reward_site(exc: BaseException) -> str:
    """``file:line: code`` of the deepest frame outside hermes-envs and site-packages (the author's line)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "site-packages" in frame.filename or "/hermes_envs/" in frame.filename:
            continue
        return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""


@check(
    "HC401",
    "result-is-object",
    "compute_reward uses AgentResult as an object",
    requires=("HC201",),
    why=(
        "AgentResult is a dataclass and its messages and tool calls are dicts; dict access on the result, "
        "made-up attributes (final_response, tool_calls, tools_used) or m.role / tc.function.name raise, and "
        "upstream turns that into a silent 0.0 for every rollout. getattr(result, 'final_response', '') or "
        "hasattr() of such a name never raises but always takes the fallback (a warning)."
    ),
    fix="Use result.messages / hermes_envs.final_response(result), m['content'], tc['function']['name'].",
)
def result_is_object(s: EnvSession) -> list[Finding]:
    """Rewards that index AgentResult like a dict, read final_response/tool_calls/tools_used (it has none), or read
    the message / tool-call dicts as objects; a getattr/hasattr fallback on such a name is a warning."""
    findings = []
    seen: set[str] = set()
    for entry in s.observe(ScoredProbes).rollouts:
        problems = list(entry.violations)
        if isinstance(entry.exc, ContractViolation) and str(entry.exc) not in problems:
            problems.append(str(entry.exc))
        if isinstance(entry.exc, (TypeError, AttributeError)) and "subscriptable" in str(entry.exc):
            problems.append(f"{entry.error} — AgentResult is a dataclass, not a dict.")
        for problem in problems:
            if problem in seen:
                continue
            seen.add(problem)
            site = _reward_site(entry.exc) if entry.exc is not None else ""
            swallowed = (
                ""
                if entry.exc is not None
                else " (your reward caught the error and carried on with a fallback score, so the bug stays "
                "silent during training)"
            )
            findings.append(
                Finding(
                    "HC401",
                    f"compute_reward should read AgentResult's attributes; {problem}{swallowed}"
                    + (f" At {site}." if site else ""),
                    "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors; "
                    "`from hermes_envs import final_response` gives the final answer.",
                    subject=f"probe {entry.origin.probe}",
                )
            )
    for entry in s.observe(ScoredProbes).rollouts:
        for problem in entry.soft_violations:
            if problem in seen:
                continue
            seen.add(problem)
            findings.append(
                Finding(
                    "HC401",
                    f"compute_reward should read what AgentResult has; {problem} (the reward never sees the "
                    "real answer, and no error says so)",
                    "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors, "
                    "and tc['function']['name'] / m['content'] on the message dicts; `from hermes_envs import "
                    "final_response` gives the final answer. If the fallback is deliberate, ignore HC401.",
                    Severity.WARNING,
                    subject=f"probe {entry.origin.probe}",
                )
            )
    return findings


@check(
    "HC402",
    "reward-never-raises",
    "compute_reward never raises on transcripts the loop can produce",
    requires=("HC201",),
    why=(
        "A reward that raises scores 0.0 (logged here, silent upstream): the model is punished for the "
        "env's bug."
    ),
    fix="Handle empty content, tool errors, truncation and long outputs.",
)
def reward_never_raises(s: EnvSession) -> list[Finding]:
    """Rewards that crash on an empty reply, tool errors, max-turns truncation, unicode or a huge output."""
    findings = []
    seen: set[str] = set()
    hc401_reports = not s.is_ignored("HC401")
    for entry in s.observe(ScoredProbes).rollouts:
        exc = entry.exc
        if exc is None or (isinstance(exc, ContractViolation) and hc401_reports):
            continue  # contract misuse is HC401's finding (unless HC401 is ignored: a raise is still a raise)
        key = f"{type(exc).__name__}:{_reward_site(exc)}"
        if key in seen:
            continue
        seen.add(key)
        about = entry.origin.about or PROBES[entry.origin.probe][2]
        hint = ""
        if isinstance(exc, AttributeError) and "'dict' object has no attribute" in str(exc):
            hint = (
                " Tool calls in result.messages are dicts: use tc['function']['name'], not tc.function.name."
            )
        site = _reward_site(exc)
        if judged_raise(entry):
            findings.append(
                Finding(
                    "HC402",
                    f"compute_reward raised {entry.error}"
                    + (f" at {site}" if site else "")
                    + f" on probe {entry.origin.probe!r} ({about}) after asking the model {entry.model_requests} time(s) "
                    "itself (a judge). Under the kit the judge's reply is the fake server's scripted text, not a "
                    "verdict, so the raise may come from the kit's reply rather than from the transcript: not "
                    "evidence of a bug.",
                    "nothing, if raising on a judge reply that is not a verdict is deliberate (the base then counts "
                    "a reward error instead of training on a made-up score). To have it judged, give the env "
                    "conformance_transcripts(item) or run the check with a cassette of real judge replies.",
                    Severity.WARNING,
                    subject=f"probe {entry.origin.probe}",
                )
            )
            continue
        findings.append(
            Finding(
                "HC402",
                f"compute_reward should score every transcript the agent loop can produce; on probe "
                f"{entry.origin.probe!r} ({about}) it raised {entry.error}"
                + (f" at {site}" if site else "")
                + "."
                + hint,
                'handle empty content (""), missing tool calls, tool error results and truncated rollouts; a reward '
                "that raises is logged and scored 0.0, which hides the bug during training.",
                subject=f"probe {entry.origin.probe}",
            )
        )
    findings += _swallowed_everywhere(s, seen)
    return findings


#: Exceptions that are bugs whatever a judge replied: the reward's own code misuses a value or a name.
_BUG_TYPES = (TypeError, AttributeError, NameError, ImportError)


def judged_raise(entry: ScoredRollout[Origin]) -> bool:
    """True when the reward raised after asking the model itself (a judge) and the exception is one a reply could
    cause (a ValueError/RuntimeError on an unparsable verdict): the kit scripted that reply, so the raise says
    nothing about the env. A TypeError/AttributeError/NameError stays a bug whatever the judge said."""
    exc = entry.exc
    return bool(entry.model_requests) and exc is not None and not isinstance(exc, _BUG_TYPES)


def _swallowed_everywhere(s: EnvSession, seen: set[str]) -> list[Finding]:
    """A bug-type exception the reward raised and caught itself on EVERY probe transcript: the reward can never
    score anything but its fallback (a parse failure on some replies is normal; on all of them it is a bug)."""
    entries = [e for e in s.observe(ScoredProbes).rollouts if e.exc is None and e.traced]
    if not entries:
        return []
    common: dict[str, tuple[BaseException, int]] = {}
    for entry in entries:
        for exc, where in entry.swallowed or []:
            key = f"{type(exc).__name__}@{where}"
            previous = common.get(key)
            common[key] = (exc, (previous[1] if previous else 0) + 1)
    findings = []
    for key, (exc, count) in common.items():
        if count < len(entries) or key in seen:
            continue
        seen.add(key)
        where = key.split("@", 1)[1]
        # After a judge call, a KeyError/IndexError may come from parsing the kit's scripted judge reply.
        judged = all(e.model_requests for e in entries) and not isinstance(exc, _BUG_TYPES)
        findings.append(
            Finding(
                "HC402",
                f"compute_reward should score transcripts without raising; on every one of the {len(entries)} "
                f"probe transcripts it raised {type(exc).__name__}: {exc} at {where}, and caught it itself (a "
                "try/except returning a fallback score), so it never scores anything but the fallback."
                + (
                    " It asked the model itself (a judge) each time, and the kit's fake server answered with "
                    "scripted text, not a verdict, so the error may come from that reply: a warning."
                    if judged
                    else ""
                ),
                "fix the line that raises; catch only what a bad model reply can cause (ValueError when parsing "
                "its text), never `except Exception` around the whole reward.",
                Severity.WARNING if judged else Severity.ERROR,
                subject=where,
            )
        )
        if len(findings) >= 2:
            break
    return findings


def _range_problem(score: Any) -> str | None:
    """What is wrong with ``score`` as a trainer score (not a finite float in [0, 1]), or None."""
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return f"got {score!r} ({type(score).__name__})"
    if not math.isfinite(score):
        return f"got {score!r}"
    if not 0.0 <= score <= 1.0:
        return f"got {score!r}, outside [0, 1]"
    return None


_RANGE_FIX = (
    "return float(...) in [0, 1]: rescale a 0..10 or 0..100 scale (`score / 10`), then clamp: "
    "`return max(0.0, min(1.0, score))`. Bonuses (brevity, format) must fit under 1.0 with the main credit."
)


@check(
    "HC403",
    "reward-range",
    "every score is a finite float in [0, 1]",
    requires=("HC201",),
    why=(
        "The trainer expects finite floats in [0, 1]; bools, None, NaN, bonuses above 1 or 0-10 / 0-100 scales "
        "break advantages."
    ),
    fix="Return float(...) clamped to [0, 1]; rescale other scales first.",
)
def reward_range(s: EnvSession) -> list[Finding]:
    """Scores that are None, a bool, a string, NaN/inf, or outside [0, 1] (the trainer expects 0..1 floats): from
    compute_reward on any transcript (negative controls, correct answers, the env's own examples, e.g. a brevity
    bonus taking a correct answer to 1.2, or a 0..10 judge scale), or in a collected group (raw atroposlib envs
    too, e.g. a 0..100 score)."""

    findings = []
    seen: set[str] = set()
    scored: list[tuple[str, str, ScoredRollout[Origin]]] = []
    if s.is_hermes_env():
        scored += [
            (f"on probe {e.origin.probe!r}", f"probe {e.origin.probe}", e)
            for e in s.observe(ScoredProbes).rollouts
        ]
        positives = s.observe(GoldProbes)
        own = s.observe(EnvTranscripts)
        scored += [
            (f"on the gold-answer probe ({e.origin.name}, a correct answer)", "gold-answer probes", e)
            for e in positives.gold
        ]
        scored += [(f"on {e.origin.name}", e.label, e) for e in own.good + own.bad]
    for where, subject, entry in scored:
        if entry.exc is not None:
            continue
        problem = _range_problem(entry.score)
        if problem and problem not in seen:
            seen.add(problem)
            findings.append(
                Finding(
                    "HC403",
                    f"compute_reward should return a finite float in [0, 1]; {where} {problem}.",
                    _RANGE_FIX,
                    subject=subject,
                )
            )
    if findings:
        return findings
    if s.is_hermes_env() and (scale := _judge_scale(s)) is not None:
        return [scale]
    # The scores atroposlib really receives: the only ones a raw BaseEnv has, and a last look for agent envs.
    group = s.observe(CollectedGroup).group
    if not group:
        if not s.is_hermes_env():
            raise Skip("collect_trajectories(item) gave no scored group (see HC501)")
        return findings
    for index, score in enumerate(group.get("scores") or []):
        if numeric(score) and not 0.0 <= score <= 1.0:
            return [
                Finding(
                    "HC403",
                    f"the scores of a collected group should be finite floats in [0, 1]; rollout {index} of "
                    f"collect_trajectories(item) scored {score!r}, outside [0, 1].",
                    _RANGE_FIX,
                    subject=f"rollout {index}",
                )
            ]
    return findings


#: A judge's top verdict in the shapes judges are told to answer in: a reward must map each into [0, 1].
TOP_VERDICTS = ("10", "SCORE: 10", "Score: 10/10", "Rating: 10", '{"score": 10}', "<score>10</score>", "100")


def _judge_scale(s: EnvSession) -> Finding | None:
    """A reward that asks a judge, re-scored with the judge giving its top verdict in each usual shape: a score
    outside [0, 1] is the judge's scale (0-10, 0-100) passed on without rescaling."""
    from hermes_envs.conformance._cases import Case, json_safe, run_case

    # (a probe whose reward raised on the kit's default judge reply is re-scored too: that reply was no verdict)
    judged = next((e for e in s.observe(ScoredProbes).rollouts if e.model_requests), None)
    if judged is None:
        return None
    transcript = [dict(m) for m in judged.result.messages]
    for verdict in TOP_VERDICTS:
        case = Case(
            rule="compute_reward returns a score in [0, 1] whatever the judge answers",
            item=judged.item,
            scripts={"the judge's top verdict": transcript},
            order=("the judge's top verdict",),
            holds=(("the judge's top verdict", ">", 1.0),),
            judge={"the judge's top verdict": {"content": verdict}},
        )
        run = run_case(s, case)
        if run.violated:
            score = run.scores["the judge's top verdict"]
            return Finding(
                "HC403",
                f"compute_reward should return a finite float in [0, 1]; on probe {judged.origin.probe!r}, with the "
                f"judge answering {verdict!r}, it returned {score!r}: the judge's scale is passed on without "
                "rescaling.",
                "divide the judge's grade by the top of its scale (a 0-10 score / 10) and clamp to [0, 1].",
                subject="judge scale",
                counterexample=case.to_json() if json_safe(case.item) else None,
            )
    return None


@check(
    "HC405",
    "no-mutation",
    "compute_reward does not mutate the messages or the item",
    requires=SCORE_PREREQUISITES,
    why="The base tokenizes result.messages after the reward; an edit changes what is trained on.",
    fix="Read without mutating; copy before editing.",
)
def no_mutation(s: EnvSession) -> list[Finding]:
    """Rewards that pop/append/edit ``result.messages`` or the item: the trainer then tokenizes a changed transcript;
    and an item whose prompt has changed once evaluate() scored it (edited in place by the reward or by evaluate()),
    so the next rollout of that shared item is asked something else."""
    findings = []
    seen: set[str] = set()
    for entry in _scored_rollouts(s):
        for what, change in entry.mutated:
            if what in seen:
                continue
            seen.add(what)
            findings.append(
                Finding(
                    "HC405",
                    f"compute_reward should leave {what} unchanged; on {entry.origin.label} {change}"
                    + (
                        ": the reward mutates its item in place (a sort, an append, a pop), and the item is "
                        "shared (get_next_item hands the same object out again and evaluate() keeps it), so "
                        "every later use of it (its prompt, the next rollout's reward) reads the edited item."
                        if what == "item"
                        else "."
                    ),
                    "read without changing: `last = result.messages[-1]` instead of `.pop()`, and copy before editing "
                    "(`messages = list(result.messages)`, `item = dict(item)`). The base tokenizes result.messages "
                    "after the reward, so an edit changes what the model is trained on.",
                    subject=(
                        f"probe {entry.origin.probe}"
                        if isinstance(entry.origin, ProbeOrigin)
                        else entry.origin.label
                    ),
                )
            )
    if "item" not in seen:
        findings += _reprompted_in_eval(s)
    return findings


def _scored_rollouts(s: EnvSession) -> Iterator[ScoredRollout[Origin]]:
    """Every rollout the kit scored: its probes, then the env's own transcripts and the proven golds. A reward
    that edits the item only when the answer is right (it consumes the gold list it matches against) changes
    nothing on a probe, so the golds must be looked at too."""
    yield from s.observe(ScoredProbes).rollouts
    try:
        own = s.observe(EnvTranscripts)
        yield from (*own.good, *own.bad)
        yield from s.observe(GoldProbes).all_gold
    except (NotApplicable, Skip):
        return


def _reprompted_in_eval(s: EnvSession) -> list[Finding]:
    """An item whose format_prompt text changed between its scoring in evaluate() and evaluate()'s end: the env
    edits the item in place, and the next rollout of that item is asked another question."""
    from hermes_envs.conformance._observations.evaluation import EvalObservation

    try:
        observed = s.observe(EvalObservation)
    except Exception:
        return []
    for item, before, after in observed.reprompted[:1]:
        at = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
        start = max(0, at - 40)
        return [
            Finding(
                "HC405",
                f"compute_reward and evaluate() should leave the item unchanged; once evaluate() had scored item "
                f"{short(item)}, the item's prompt (format_prompt(item)) had changed from "
                f"...{before[start : start + 120]!r} to ...{after[start : start + 120]!r}: the env mutates its item "
                "in place (a sort, an append, a pop in the reward or in evaluate()'s own bookkeeping), and the item "
                "is shared (get_next_item and evaluate() hand the same object out again), so every later prompt "
                "built from it changes (it can show the answer) and later rewards read the edited item.",
                "read without changing: `sorted(item['rows'], ...)` instead of `item['rows'].sort(...)`, and copy "
                "before editing (`item = copy.deepcopy(item)`).",
                subject=f"item {short(item, 60)} in evaluate()",
            )
        ]
    return []
