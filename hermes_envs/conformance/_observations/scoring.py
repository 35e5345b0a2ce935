"""compute_reward on the session's rollouts, each scored on strict copies of the result in the rollout's sandbox:
every probe transcript, the item-shaped negative controls, the env's own good / bad transcripts and the gold-answer
probes, and the best control score of each item that a correct answer must beat.

The reward checks (HC4xx) and the checks built on their scores (answers, isolation, fuzz) read these. The order
they are made in is fixed by what each needs (the controls before the gold probes that must beat them), so the
scores are the same whichever check asks first.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, Literal, TypeGuard, TypeVar

from hermes_envs.conformance._ctxpaths import record_paths
from hermes_envs.conformance._findings import NotApplicable
from hermes_envs.conformance._golds import gold_positives
from hermes_envs.conformance._observations.origin import (
    ControlOrigin,
    EnvOrigin,
    GoldOrigin,
    Origin,
    ProbeOrigin,
    TwinOrigin,
)
from hermes_envs.conformance._observations.rollouts import ProbeTranscripts, probe_items, run_probe
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._probes import (
    CONTROLS,
    ContractViolation,
    StrictAgentResult,
    env_transcripts,
    play,
    say,
)
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._sites import RaisedInAuthorCode
from hermes_envs.conformance._text import short

#: The origin of the rollout :func:`score_rollout` scores.
R = TypeVar("R", bound=Origin)


def numeric(score: Any) -> TypeGuard[int | float]:
    """True for a finite int or float score (not a bool, None, a string, NaN or inf)."""
    return isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)


def item_key(item: Any) -> str:
    """How scores of one item are grouped (items may be unhashable)."""
    return repr(item)


#: The kind of origin a scored rollout carries (:class:`ScoredRollout` of one kind of rollout).
O_co = TypeVar("O_co", bound=Origin, covariant=True)


@dataclass(frozen=True)
class ScoredRollout(Generic[O_co]):
    """compute_reward called twice (for HC404) on strict copies of one rollout's result, in its sandbox.

    ``origin``: which rollout it was (a probe, a control, the env's own transcript, a gold answer ..., see
    :mod:`hermes_envs.conformance._observations.origin`). ``score`` / ``score2``: the two scores; ``error`` /
    ``exc``: what the first raising call raised; ``violations`` / ``soft_violations``: misuses of AgentResult the
    strict copy saw (HC401); ``mutated``: (what, how) the reward changed (HC405); ``accesses``: (file access,
    sandbox, root) for HC602; ``model_requests``: model calls the reward made itself (a judge, HC409);
    ``swallowed``: (exception, "file:line: code") of bug-type raises the reward caught itself (HC402, when
    ``traced``); ``ctx_paths``: (ToolContext method, absolute path) it handed its ToolContext (HC604).
    """

    item: Any
    result: Any
    task_id: str
    origin: O_co
    score: Any = None
    score2: Any = None
    error: str | None = None
    exc: BaseException | None = None
    violations: tuple[str, ...] = ()
    soft_violations: tuple[str, ...] = ()
    mutated: tuple[tuple[str, str], ...] = ()
    accesses: tuple[tuple[Any, str | None, str | None], ...] = ()
    model_requests: int = 0
    swallowed: tuple[tuple[BaseException, str], ...] = ()
    ctx_paths: tuple[tuple[str, str], ...] = ()
    traced: bool = False

    @property
    def label(self) -> str:
        """The rollout's name in a finding (``probe '<probe>'`` for a probe)."""
        return self.origin.label


def score_rollout(
    s: EnvSession,
    item: Any,
    result: Any,
    task_id: str,
    origin: R,
    phase: str = "rewards",
    trace: bool = False,
) -> ScoredRollout[R]:
    """Call compute_reward on strict copies of ``result`` (twice, for HC404) in the rollout's sandbox, which is
    cleaned up afterwards; ``origin`` says which rollout it is."""
    from hermes_envs.conformance._fileaudit import FileAudit, sandbox_of
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    env = s.env()
    scores: dict[str, Any] = {"score": None, "score2": None}
    error: str | None = None
    exc_seen: BaseException | None = None
    violations: list[str] = []
    soft_violations: list[str] = []
    mutated: list[tuple[str, str]] = []
    model_requests = 0
    swallowed: list[tuple[BaseException, str]] = []
    ctx_paths: list[tuple[str, str]] = []
    traced = False
    item_before = copy.deepcopy(item)
    audit = FileAudit()
    ctx = ToolContext(task_id)
    record_paths(ctx, ctx_paths)
    sandbox, root = sandbox_of(task_id)
    try:
        for key in ("score", "score2"):
            strict = StrictAgentResult.of(result)
            requests_before = len(s.server.calls)
            tracer = RaisedInAuthorCode() if trace and key == "score" else contextlib.nullcontext()
            try:
                with audit.watching("compute_reward"), tracer:
                    scores[key] = s.run_env(
                        lambda _env, strict=strict: env.compute_reward(item, strict, ctx), phase=phase
                    )
            except Exception as exc:
                exc_seen = exc
                error = f"{type(exc).__name__}: {exc}"
            if isinstance(tracer, RaisedInAuthorCode):
                traced = True
                swallowed = [
                    (e, where)
                    for e, where in tracer.swallowed(exc_seen)
                    if not isinstance(e, ContractViolation)
                ]
            if key == "score":  # model requests the reward itself made (a judge)
                model_requests = sum(
                    1 for c in s.server.calls[requests_before:] if c.route.endswith("completions")
                )
            violations.extend(v for v in strict.violations if v not in violations)
            soft_violations.extend(v for v in strict.soft_violations if v not in soft_violations)
            if key == "score" and strict.messages != result.messages:
                mutated.append(("result.messages", _diff_messages(result.messages, strict.messages)))
            if exc_seen is not None:
                break
        if item != item_before:
            mutated.append(("item", f"{short(item_before)} became {short(item)}"))
    finally:
        if sandbox is None:
            sandbox, root = sandbox_of(task_id)
        ctx.cleanup()
        cleanup_sandbox(task_id)
    return ScoredRollout(
        item=item,
        result=result,
        task_id=task_id,
        origin=origin,
        score=scores["score"],
        score2=scores["score2"],
        error=error,
        exc=exc_seen,
        violations=tuple(violations),
        soft_violations=tuple(soft_violations),
        mutated=tuple(mutated),
        accesses=tuple((a, sandbox, root) for a in audit.accesses),
        model_requests=model_requests,
        swallowed=tuple(swallowed),
        ctx_paths=tuple(ctx_paths),
        traced=traced,
    )


def _diff_messages(before: list[Any], after: list[Any]) -> str:
    if len(before) != len(after):
        return f"{len(before)} messages became {len(after)}"
    for i, (a, b) in enumerate(zip(before, after)):
        if a != b:
            return f"message {i} {short(a, 100)} became {short(b, 100)}"
    return "changed"


@dataclass(frozen=True)
class ScoredProbes:
    """Every probe transcript (:class:`~hermes_envs.conformance._observations.rollouts.ProbeTranscripts`) scored."""

    rollouts: tuple[ScoredRollout[ProbeOrigin], ...]

    @classmethod
    def build(cls, s: EnvSession) -> ScoredProbes:
        if not s.is_hermes_env():
            raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
        out = []
        for run in s.observe(ProbeTranscripts).runs:
            # Traced for exceptions the reward swallows (HC402); not the 200 KB answer, whose cost the tracer
            # would multiply into a stall HC408 blames on the env.
            traced = run.probe != "huge_output"
            out.append(
                score_rollout(
                    s, run.item, run.result, run.task_id, ProbeOrigin(run.probe, run.about), trace=traced
                )
            )
        return cls(rollouts=tuple(out))


#: Negative controls shaped like the item's structured answer: the empty answer of the task's shape. A reward
#: that counts missing fields as right (``got.get(k, v) == v``) or only penalises wrong entries gives them credit.
EMPTY_STRUCTURED = {"dict": ("{}", "```json\n{}\n```"), "list": ("[]", "Answer: []")}


@dataclass(frozen=True)
class ItemControls:
    """The item-shaped negative controls scored: the empty JSON object / list of each structured gold."""

    rollouts: tuple[ScoredRollout[ControlOrigin], ...]

    @classmethod
    def build(cls, s: EnvSession) -> ItemControls:
        from hermes_envs.conformance._golds import structured_fields
        from hermes_envs.conformance._probes import say

        out: list[ScoredRollout[ControlOrigin]] = []
        for item in probe_items(s):
            kinds = {kind for _name, kind, _value in structured_fields(item)}
            for kind in sorted(kinds):
                for text in EMPTY_STRUCTURED[kind]:
                    name = f"empty {'object' if kind == 'dict' else 'list'} {text!r}"
                    result, task_id = run_probe(s, item, say(text), 3, "empty-structured", "gold")
                    about = f"the task's answer shape with nothing in it ({text!r})"
                    out.append(score_rollout(s, item, result, task_id, ControlOrigin(name, about), "gold"))
        return cls(rollouts=tuple(out))


@dataclass(frozen=True)
class EnvTranscripts:
    """The env's own known-good and known-bad transcripts (``conformance_transcripts(item)``) of each probe item,
    played through the agent loop and scored; ``error``: what conformance_transcripts raised."""

    good: tuple[ScoredRollout[EnvOrigin], ...]
    bad: tuple[ScoredRollout[EnvOrigin], ...]
    error: str | None

    @classmethod
    def build(cls, s: EnvSession) -> EnvTranscripts:
        env = s.env()
        s.observe(ScoredProbes)  # the probes first, as ever: the env's transcripts run on the env they left
        found: dict[str, list[ScoredRollout[EnvOrigin]]] = {"good": [], "bad": []}
        error = None
        for item in probe_items(s):
            try:
                own = env_transcripts(env, item)
            except Exception as exc:
                error = f"conformance_transcripts(item) raised {type(exc).__name__}: {exc}"
                own = {}
            verdicts: tuple[Literal["bad", "good"], ...] = ("bad", "good")
            for kind in verdicts:
                for index, script in enumerate(own.get(kind, [])):
                    result, task_id = run_probe(
                        s, item, play(script), max(len(script) + 1, 2), f"env-{kind}", "gold"
                    )
                    found[kind].append(
                        score_rollout(s, item, result, task_id, EnvOrigin(kind, index), "gold")
                    )
        return cls(good=tuple(found["good"]), bad=tuple(found["bad"]), error=error)


@dataclass(frozen=True)
class Controls:
    """Per item (:func:`item_key`): the (name, score) of every negative control that scored a number (the probes
    in CONTROLS, the env's bad transcripts, the item-shaped controls)."""

    by_item: Mapping[str, tuple[tuple[str, float], ...]]

    @classmethod
    def build(cls, s: EnvSession) -> Controls:
        out: dict[str, list[tuple[str, float]]] = {}
        for entry in s.observe(ScoredProbes).rollouts:
            if entry.origin.probe in CONTROLS and numeric(entry.score):
                out.setdefault(item_key(entry.item), []).append((entry.origin.probe, float(entry.score)))
        negatives: list[ScoredRollout[Origin]] = [
            *s.observe(EnvTranscripts).bad,
            *s.observe(ItemControls).rollouts,
        ]
        for other in negatives:
            if numeric(other.score):
                out.setdefault(item_key(other.item), []).append((other.origin.name, float(other.score)))
        return cls(by_item=MappingProxyType({k: tuple(v) for k, v in out.items()}))

    def best(self, item: Any, ceiling: float) -> tuple[str, float]:
        """The highest-scoring control of ``item`` among those under ``ceiling`` (the others are HC406's
        findings): a correct answer must beat it."""
        scored = self.by_item.get(item_key(item), ())
        under = [c for c in scored if c[1] <= ceiling]
        if under:
            return max(under, key=lambda c: c[1])
        return min(scored, key=lambda c: c[1], default=("none", 0.0))


@dataclass(frozen=True)
class GoldProbes:
    """Gold-answer probes of each probe item the env's own good transcripts did not already prove, stopping at the
    first that scores above the item's best control.

    ``gold``: those that did (one per proven item); ``all_gold``: every gold probe scored, proven or not (HC404
    scores them again in other processes); ``tried``: per item (:func:`item_key`), the names of the probes tried."""

    gold: tuple[ScoredRollout[GoldOrigin], ...]
    all_gold: tuple[ScoredRollout[GoldOrigin], ...]
    tried: Mapping[str, tuple[str, ...]]
    #: Per item (:func:`item_key`): the proven gold's answer shape written with a WRONG value of the same field
    #: (another item's, else a perturbed one), scored. See :meth:`confirmed`.
    twins: Mapping[str, ScoredRollout[TwinOrigin]] = dataclasses.field(
        default_factory=lambda: MappingProxyType({})
    )

    def confirmed(self, gold: ScoredRollout[Origin]) -> bool:
        """Whether the env itself confirms the kit's guess that ``gold`` is the item's answer: the same answer
        shape with another value scores lower. Beating the controls alone says only that the reply earned
        something (its length, its format, a fake judge's verdict); findings resting on the gold are errors only
        when it is confirmed, warnings otherwise (docs/checks.md, "Calibrated severity")."""
        twin = self.twins.get(item_key(gold.item))
        return (
            twin is not None
            and numeric(twin.score)
            and numeric(gold.score)
            and float(twin.score) < float(gold.score) - 1e-9
        )

    @classmethod
    def build(cls, s: EnvSession) -> GoldProbes:
        s.env()
        schemas, _names = s.tools()
        own = s.observe(EnvTranscripts)
        controls = s.observe(Controls)
        gold: list[ScoredRollout[GoldOrigin]] = []
        all_gold: list[ScoredRollout[GoldOrigin]] = []
        tried: dict[str, list[str]] = {}
        for item in probe_items(s):
            ceiling = controls.best(item, s.settings.control_ceiling)[1]
            names = tried.setdefault(item_key(item), [])
            if any(e.item == item and numeric(e.score) and e.score > ceiling for e in own.good):
                continue  # the env proved it itself
            for positive in gold_positives(item, schemas, prompt_text(s.env(), item)):
                result, task_id = run_probe(s, item, positive.responder, 3, "gold", "gold")
                origin = GoldOrigin(
                    positive.name,
                    positive.source,
                    positive.field,
                    positive.value,
                    positive.template,
                    positive.kind,
                )
                entry = score_rollout(s, item, result, task_id, origin, "gold")
                names.append(positive.name)
                all_gold.append(entry)
                if numeric(entry.score) and entry.score > ceiling:
                    gold.append(entry)
                    break
        twins: dict[str, ScoredRollout[TwinOrigin]] = {}
        others = [*probe_items(s), *s.observe(TrainingScan).items]
        for entry in gold:
            proven = entry.origin
            if proven.source != "field" or not proven.template or proven.value is None:
                continue
            wrong = wrong_value(str(proven.value), proven.field, entry.item, others)
            if wrong is None:
                continue
            answer = proven.template.format(v=wrong)
            result, task_id = run_probe(s, entry.item, say(answer), 3, "gold-twin", "gold")
            twin = TwinOrigin(
                f"field {proven.field!r} answered with a wrong value as {answer[:80]!r}",
                proven.field,
                wrong,
                proven.template,
                proven.kind,
            )
            twins[item_key(entry.item)] = score_rollout(s, entry.item, result, task_id, twin, "gold")
        return cls(
            gold=tuple(gold),
            all_gold=tuple(all_gold),
            tried=MappingProxyType({k: tuple(v) for k, v in tried.items()}),
            twins=MappingProxyType(twins),
        )


def prompt_text(env: Any, item: Any) -> str:
    """The system and user text a rollout of ``item`` starts from ("" when the env cannot build it): where the
    env tells the model the answer shape it expects."""
    from hermes_envs.env._prompt import initial_messages_of

    try:
        messages = initial_messages_of(env, item)
    except Exception:
        return ""
    return "\n".join(
        str(m.get("content")) for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)
    )


def wrong_value(value: str, field: str | None, item: Any, others: list[Any]) -> str | None:
    """A value of ``field`` that is NOT ``item``'s: another item's (the most realistic wrong answer), else the
    value perturbed (a number plus one, a word with its letters changed); None when none can be made."""
    import json

    if field is not None and field.endswith(" unit") and " " in value.strip():
        # A number with its unit ("12.5 km"): a wrong number in the same unit.
        amount, _, unit = value.strip().rpartition(" ")
        wrong = wrong_value(amount, field.removesuffix(" unit"), item, others)
        return f"{wrong} {unit}" if wrong is not None else None
    for other in others:
        if not isinstance(other, dict) or other is item or field not in other:
            continue
        raw = other[field]
        text = (
            raw.strip()
            if isinstance(raw, str)
            else json.dumps(raw)
            if isinstance(raw, (dict, list))
            else str(raw)
        )
        if text and text.lower() != value.strip().lower() and text not in value and value not in text:
            return text
    stripped = value.strip()
    try:
        number = float(stripped.replace(",", ""))
    except ValueError:
        number = None
    if number is not None and math.isfinite(number):
        return str(int(number) + 7) if number.is_integer() else f"{number + 7.5:g}"
    if stripped and len(stripped) <= 200 and "\n" not in stripped:
        return (
            "zq" + stripped[::-1].lower() if stripped[::-1].lower() != stripped.lower() else "zqx" + stripped
        )
    return None
