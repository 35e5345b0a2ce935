"""Faults (HC505, HC708): rollouts and evaluate() while the model server fails (every request an HTTP 500).

A failed model call has no answer to score. Every correct env either raises, drops the rollout, or counts the
failure where its author will see it (a metric, a sample); scoring it like a wrong answer, or leaving it out of the
mean without saying so, makes an outage look like a bad policy (or a good one). The evidence is always two runs
the env cannot tell apart, or a group it scored without a single model reply.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._env_state import State
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._observations.logs import captured_log
from hermes_envs.conformance._probes import Responder
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession

#: The HTTP status every model request gets in the fault runs: a server error, the commonest outage.
FAULT_STATUS = 500
#: What the model answers in the baseline run the fault run is compared with: a plain wrong answer, no tools.
WRONG_ANSWER = "I don't know."


def failing_model(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model's reply in a fault run: HTTP 500 on every request (also a judge's)."""
    return {"content": WRONG_ANSWER, "fault": FAULT_STATUS}


def wrong_answers(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model of the baseline runs: every request answered :data:`WRONG_ANSWER`, no tools."""
    return {"content": WRONG_ANSWER}


def group_scores(group: Any) -> list[Any]:
    """The scores of a ScoredDataGroup (or of each group of a list of them)."""
    groups = group if isinstance(group, list) else [group]
    out: list[Any] = []
    for g in groups:
        if isinstance(g, dict):
            out.extend(g.get("scores") or [])
    return out


@check(
    "HC505",
    "faults-not-scored",
    "a group whose model requests all failed is dropped or raised, never scored",
    requires=("HC201",),
    why=(
        "A failed model request has no answer; a group scored from placeholder completions trains the policy on an "
        "outage and no metric shows it happened."
    ),
    fix=(
        "Let the error propagate, or return None for the rollout and the group (HermesAgentBaseEnv drops a "
        "rollout whose termination is 'api_error')."
    ),
)
def faults_not_scored(s: EnvSession) -> list[Finding]:
    """collect_trajectories that catches a model-server error and still returns a scored group (an empty or
    placeholder completion scored 0): every outage becomes training data that teaches the policy nothing true, and
    no metric shows it happened. An error when nothing was logged either; a warning when the failure was at least
    logged (upstream's base scores a rollout without output 0.0 with a warning)."""
    from hermes_envs.conformance._observations.rollouts import probe_items
    from hermes_envs.conformance.checks.trajectory import eval_only

    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item = probe_items(s)[0]
    with s.sandbox_leaks(), s.responding(failing_model) as made, captured_log() as log:
        try:
            group, _backlog = s.run_env(lambda e: e.collect_trajectories(item), timeout=120, phase="faults")
        except Exception:
            return []  # raised: the trainer sees the failure
    if not made:
        raise Skip("collect_trajectories(item) made no model request while the server failed")
    answered = [c for c in made if int(getattr(c, "status", 0) or 0) < 400]
    if answered:
        raise Skip(f"{len(answered)} model request(s) were answered although every one should have failed")
    scores = group_scores(group)
    if not scores:
        return []  # dropped (None or an empty group): right
    shown = ", ".join(repr(x) for x in scores[:8])
    told = [r for r in log if not r.split(" ", 2)[1].startswith(_HTTP_LOGGERS)]
    return [
        Finding(
            "HC505",
            f"collect_trajectories(item) should drop the group (return None) or raise when the model server fails; "
            f"every one of its {len(made)} model request(s) got HTTP {FAULT_STATUS}, so no rollout has a model "
            f"reply, yet it returned {len(scores)} scored rollout(s) (scores {shown}) that the trainer would "
            "train on"
            + (
                f" (the failure was only logged: {told[0][:140]!r})." if told else ", and nothing was logged."
            ),
            "let the error propagate, or return None for the rollout and the group when chat_completion raises "
            "(HermesAgentBaseEnv does: a rollout whose result.termination is 'api_error' is dropped and counted); "
            "never build a scored item from a placeholder completion.",
            # Logged, the outage is visible to whoever reads the log (upstream's own base scores such a rollout 0.0
            # with a warning); silent, it is not visible anywhere.
            Severity.WARNING if told else Severity.ERROR,
            subject=f"item {_short(item)}",
        )
    ]


#: Loggers of the HTTP and retry stack: their records say a request failed, not that the env noticed.
_HTTP_LOGGERS = ("openai", "httpx", "httpcore", "atroposlib", "tenacity", "asyncio", "aiohttp", "urllib3")


@dataclass(frozen=True)
class EvalRun:
    """One evaluate() run with a given fake model: what it raised, logged, returned and let reach wandb_log."""

    error: str | None
    metrics: tuple[Any, ...]
    samples: tuple[int, ...]
    returned: Any
    wandb: tuple[dict[str, Any], ...]
    requests: int
    statuses: tuple[int, ...]
    log: tuple[str, ...]

    def report(self) -> tuple[Any, ...]:
        """Everything an author could read the run's outcome from (the run's own timings left out)."""
        return (
            tuple(_comparable(m) for m in self.metrics),
            self.samples,
            _comparable(self.returned),
            tuple(_comparable(w) for w in self.wandb),
        )


_TIMING = ("time", "seconds", "duration", "elapsed", "latency", "_sec", "_ms", "throughput", "per_second")


def _comparable(value: Any) -> Any:
    """``value`` with timing entries left out and NaN made equal to itself, for comparing two runs' reports."""
    if isinstance(value, dict):
        return tuple(
            sorted(
                (str(k), _comparable(v))
                for k, v in value.items()
                if not any(t in str(k).lower() for t in _TIMING)
            )
        )
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, (list, tuple)):
        return tuple(_comparable(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


@contextlib.contextmanager
def _spy_base_evaluate_log(metrics: list[Any], samples: list[int]) -> Iterator[None]:
    """Record what reaches atroposlib's ``BaseEnv.evaluate_log`` (after any base class in between, such as
    HermesAgentBaseEnv's, added its counts): the metrics and how many samples."""
    from atroposlib.envs.base import BaseEnv

    original = BaseEnv.__dict__.get("evaluate_log")
    if original is None:  # (a seam: hermes_envs._seams)
        raise Skip(
            "the installed atroposlib's BaseEnv has no evaluate_log (hermes-envs was checked against 0.4), so what "
            "evaluate() reports cannot be recorded. Fix: install a supported atroposlib, or ignore this check."
        )

    async def spy(env_self: Any, *args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("metrics", args[0] if args else None)
        metrics.append(dict(given) if isinstance(given, dict) else given)
        rows = kwargs.get("samples", args[6] if len(args) > 6 else None)
        samples.append(len(rows) if isinstance(rows, (list, tuple)) else -1)
        return await original(env_self, *args, **kwargs)

    BaseEnv.evaluate_log = spy
    try:
        yield
    finally:
        BaseEnv.evaluate_log = original


def eval_run(s: EnvSession, responder: Responder, phase: str) -> EvalRun:
    from hermes_envs.testing._wandb_spy import spy_base_wandb_log

    metrics: list[Any] = []
    samples: list[int] = []
    error = None
    returned = None

    def evals(m: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in m.items() if str(k).startswith(("eval", "val")) or "/eval" in str(k)}

    with (
        _spy_base_evaluate_log(metrics, samples),
        spy_base_wandb_log(evals) as logged,
        s.sandbox_leaks(),
        s.responding(responder) as made,
        captured_log() as log,
    ):
        try:
            with s.scratch_cwd():
                returned = s.run_env(lambda e: e.evaluate(), timeout=300, phase=phase)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        if error is None:
            try:
                s.run_env(lambda e: e.wandb_log({}), phase="wandb_log")
            except Exception:  # HC704 reports a wandb_log that cannot log
                pass
    return EvalRun(
        error=error,
        metrics=tuple(metrics),
        samples=tuple(samples),
        returned=returned,
        wandb=tuple(w for w in logged if w),
        requests=len(made),
        statuses=tuple(int(getattr(c, "status", 0) or 0) for c in made),
        log=tuple(log),
    )


@dataclass(frozen=True)
class WrongAnswerEval:
    """evaluate() run once with every model request answered :data:`WRONG_ANSWER`: what an eval that got nothing
    right reports (HC708 compares an outage with it, HC713 answers the training reward credits)."""

    run: EvalRun
    #: The env's plain state before and after the run (HC714: evaluate() must not move training).
    before: State
    after: State

    @classmethod
    def build(cls, s: EnvSession) -> WrongAnswerEval:
        before = State.of(s.env())
        run = eval_run(s, wrong_answers, "evaluate-baseline")
        return cls(run, before, State.of(s.env()))


@check(
    "HC708",
    "eval-faults-reported",
    "evaluate() counts or raises model-server errors (--thorough)",
    thorough=True,
    requires=("HC703",),
    why=(
        "An outage during eval that is scored like wrong answers (or dropped from the mean without a count) reads "
        "as a policy that got worse, or as a mean over fewer items nobody knows is smaller."
    ),
    fix=(
        "Count failed eval rollouts (result.termination == 'api_error') in the metrics, e.g. eval/api_errors, or "
        "let the error propagate; HermesAgentBaseEnv.evaluate_log adds the count for rollouts run through it."
    ),
)
def eval_faults_reported(s: EnvSession) -> list[Finding]:
    """An evaluate() that catches a failed model call and scores the item 0, or leaves it out of the mean,
    without counting it anywhere: a server outage during eval reads as a policy that got worse (or, dropped, as
    a mean over fewer items that nobody knows is smaller). Seen as two evaluate() runs whose reports are identical:
    one where every model request failed (HTTP 500) and one where the model answered every item wrongly."""
    baseline = s.observe(WrongAnswerEval).run
    if baseline.error is not None:
        raise Skip(f"evaluate() raised with a model that answers ({baseline.error}); HC202/HC707 report it")
    if not baseline.requests:
        raise Skip("evaluate() made no model request (see HC202)")
    if not any(baseline.metrics) and not baseline.returned and not baseline.wandb:
        raise NotApplicable("evaluate() reports no metrics to compare (HC703 reports that)")
    faulted = eval_run(s, failing_model, "evaluate-faults")
    if faulted.error is not None or not faulted.requests:
        return []  # raised (the trainer sees it), or asked nothing this time (HC707's subject)
    if any(code < 400 for code in faulted.statuses):
        raise Skip("some model requests were answered although every one should have failed")
    if faulted.report() != baseline.report():
        return []  # the failures show somewhere: a count, fewer samples, another value
    told = [
        r for r in faulted.log if r not in baseline.log and not r.split(" ", 2)[1].startswith(_HTTP_LOGGERS)
    ]
    shown = describe_eval_run(faulted)
    message = (
        f"evaluate() should raise, or count the failed items in its metrics, when model calls fail; every one of "
        f"its {faulted.requests} model request(s) got HTTP {FAULT_STATUS}, and it reported exactly what it "
        f"reported when the model answered each of its {baseline.requests} request(s) with {WRONG_ANSWER!r}: "
        f"{shown}. An outage reads as a wrong answer (or as a mean over fewer items) in the eval curve."
    )
    fix = (
        "count the rollouts whose result.termination == 'api_error' (or whose chat_completion raised) and log "
        "the count (e.g. 'eval/api_errors') with the accuracy, or let the error propagate; HermesAgentBaseEnv's "
        "evaluate_log adds 'eval/api_errors' when the eval rollouts ran through run_agent / HermesAgentLoop."
    )
    if told:
        # The env said so in its log: the author can see it, though not in the metrics. Not a silent score.
        return [
            Finding(
                "HC708",
                message + f" It did log {told[0][:160]!r}, but no metric or sample shows the failures.",
                fix,
                Severity.WARNING,
                subject="evaluate() with every model request failing",
            )
        ]
    return [Finding("HC708", message, fix, subject="evaluate() with every model request failing")]


def describe_eval_run(run: EvalRun) -> str:
    parts = []
    if any(run.metrics):
        parts.append(f"evaluate_log(metrics={_clip(run.metrics[-1])})")
    if run.returned is not None:
        parts.append(f"returned {_clip(run.returned)}")
    if run.wandb:
        parts.append(f"wandb_log got {_clip(run.wandb[-1])}")
    return "; ".join(parts) or "nothing"


def _clip(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short(item: Any) -> str:
    return _clip(item, 80)
