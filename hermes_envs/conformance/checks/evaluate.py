"""HC7xx — evaluate: seen through the fake server's request log and spies on atroposlib's logging methods."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_envs._chat import offered_tool_names
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity, Skip
from hermes_envs.conformance._observations.evaluation import EVAL_ANSWER, EvalObservation
from hermes_envs.conformance._observations.wandb_log import PROBE_METRIC, WandbObservation
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.testing._wandb_spy import spy_base_wandb_log


def _observed(s: EnvSession) -> EvalObservation:
    observed = s.observe(EvalObservation)
    if not observed.requests:
        raise Skip("evaluate() made no model request (see HC202)")
    return observed


@check(
    "HC701",
    "eval-agent-loop",
    "evaluate runs the agent loop with the env's tools",
    requires=("HC202",),
    why="Eval without tools (or single-turn) measures a different task from training.",
    fix="Run HermesAgentLoop with the resolved tools in evaluate().",
)
def eval_agent_loop(s: EnvSession) -> list[Finding]:
    """``evaluate()`` doing one ``chat_completion`` without tools: eval measures a different task than training
    (tool-use rate 0), so its accuracy says nothing about the policy being trained."""
    schemas, _names = s.tools()
    if not schemas:
        raise NotApplicable("the env offers no tools")
    observed = _observed(s)
    requests = observed.requests
    with_tools = [c for c in requests if offered_tool_names(c.body)]
    if not with_tools:
        plain = sum(1 for c in requests if "chat/" not in c.route)
        route = (
            f" ({plain} went to /v1/completions, a single plain-text completion that can neither offer tools nor "
            "continue after a tool call)"
            if plain
            else ""
        )
        return [
            Finding(
                "HC701",
                f"evaluate() should offer the env's tools to the model, as training does; got {len(requests)} "
                f"request(s), none offering tools{route}.",
                _agent_loop_fix(s.load()),
            )
        ]
    followed = any(m.get("role") == "tool" for c in requests for m in c.body.get("messages") or [])
    if not followed:
        return [
            Finding(
                "HC701",
                f"evaluate() should answer the model's tool calls and continue (an agent loop); the fake model called "
                f"tools in {len(with_tools)} request(s) but no request ever carried a tool result.",
                "use HermesAgentLoop(...).run(messages) in evaluate instead of a single chat_completion.",
            )
        ]
    return []


def _agent_loop_fix(cls: type) -> str:
    """HC701's fix in the API of the base ``cls`` really has: ``self.run_agent`` exists only on hermes-envs' base
    (upstream hermes-agent's base, and others, run ``HermesAgentLoop`` themselves)."""
    if callable(getattr(cls, "run_agent", None)):
        return (
            "run each eval item through the agent loop with the env's tools: `result = await "
            "self.run_agent(messages, temperature=0.0)` (HermesAgentBaseEnv, docs/framework.md)."
        )
    return (
        "run each eval item through the agent loop with the env's tools: `schemas, names = "
        "self._resolve_tools_for_group()`, then `result = await HermesAgentLoop(server=self.server, "
        "tool_schemas=schemas, valid_tool_names=names, temperature=0.0).run(messages)` "
        "(from environments.agent_loop import HermesAgentLoop)."
    )


@check(
    "HC702",
    "eval-temperature-zero",
    "evaluate samples at temperature 0",
    requires=("HC202",),
    why=(
        "Sampled evals are noisy and not comparable between checkpoints. A warning: a benchmark may sample on "
        "purpose (pass@1 over samples), which only the author can confirm."
    ),
    fix="temperature=0.0 in evaluate().",
)
def eval_temperature_zero(s: EnvSession) -> list[Finding]:
    """Evaluation at a sampling temperature: the metric is noisy and not comparable between evals.

    A warning, not an error: a benchmark may sample on purpose (upstream's terminalbench_2 and tblite evaluate at
    ``agent_temperature`` to report pass@1 over samples), so a hot eval is a choice only the author can confirm."""
    requests = _observed(s).requests
    hot = [c.body.get("temperature") for c in requests if c.body.get("temperature") not in (0, 0.0)]
    if hot:
        values = sorted({repr(t) for t in hot})
        return [
            Finding(
                "HC702",
                f"evaluate() should sample at temperature 0; {len(hot)} of {len(requests)} request(s) used "
                f"temperature {', '.join(values)}"
                + (" (None: the server's default, 1.0)" if "None" in values else "")
                + ".",
                "pass temperature=0.0 to HermesAgentLoop (or chat_completion) in evaluate; agent_temperature is for "
                "training rollouts. If the eval samples on purpose (pass@k), silence HC702.",
                Severity.WARNING,
            )
        ]
    return []


@check(
    "HC703",
    "eval-metrics",
    "evaluate logs or returns its metrics",
    requires=("HC202",),
    why="An eval nobody can see costs compute and informs nothing.",
    fix="await self.evaluate_log(metrics=...) (or return / keep them for wandb_log).",
)
def eval_metrics(s: EnvSession) -> list[Finding]:
    """An evaluate() that computes accuracy and drops it: the eval runs, costs, and nobody ever sees a number."""
    observed = _observed(s)
    if observed.error:
        raise Skip(f"evaluate() raised {observed.error}")
    logged = [m for m in observed.logged if m]
    returned = observed.returned
    if logged or (isinstance(returned, dict) and returned):
        return []
    calls = s.observe(WandbObservation).calls
    if any(k.startswith(("eval", "val")) or "/eval" in k for c in calls for k in c):
        return []
    how = "called evaluate_log with empty metrics" if observed.logged else "never called evaluate_log"
    return [
        Finding(
            "HC703",
            f"evaluate() should log its metrics; it {how}, returned {returned!r}, and no eval metric reached "
            "wandb_log.",
            "end evaluate with `await self.evaluate_log(metrics={'eval/accuracy': acc}, samples=samples, ...)` "
            "(it also writes data_dir_to_save_evals), or keep them for wandb_log.",
        )
    ]


@check(
    "HC704",
    "wandb-log-super",
    "wandb_log overrides call super().wandb_log(metrics)",
    requires=("HC201",),
    why="Without super(), the base's metrics (tool errors, lengths, rollout tables) and yours are dropped.",
    fix="End the override with `await super().wandb_log(wandb_metrics)`.",
)
def wandb_log_super(s: EnvSession) -> list[Finding]:
    """A wandb_log override that forgets super(), or calls it only when given metrics (atroposlib calls
    ``wandb_log({})`` and ``wandb_log()``): the base's metrics (tool errors, completion lengths, the rollout table)
    and the env's own are never logged."""
    observed = s.observe(WandbObservation)
    cls = s.load()
    if observed.error:
        import inspect

        if not inspect.iscoroutinefunction(getattr(cls, "wandb_log", None)):
            return [
                Finding(
                    "HC704",
                    f"{cls.__name__}.wandb_log should be `async def` and await super().wandb_log(...); got a plain "
                    f"`def`, so atroposlib's `await self.wandb_log()` fails ({observed.error}) and the "
                    "super() call is never awaited: nothing is logged.",
                    "write `async def wandb_log(self, wandb_metrics=None):` ending with "
                    "`await super().wandb_log(wandb_metrics)`.",
                )
            ]
        return [
            Finding(
                "HC704",
                f"{cls.__name__}.wandb_log(metrics) should log offline; it raised {observed.error}.",
                "make wandb_log work with use_wandb=False.",
            )
        ]
    if not observed.calls:
        return [
            Finding(
                "HC704",
                f"{cls.__name__}.wandb_log should call super().wandb_log(wandb_metrics); got an override that never "
                "reaches atroposlib's BaseEnv.wandb_log, so nothing is logged.",
                "end the override with `await super().wandb_log(wandb_metrics)`.",
            )
        ]
    if not any(PROBE_METRIC in c for c in observed.calls):
        return [
            Finding(
                "HC704",
                f"{cls.__name__}.wandb_log should pass the metrics it is given on to super(); a metric passed in "
                f"({PROBE_METRIC!r}) never reached BaseEnv.wandb_log.",
                "add to the dict you receive and pass it on: `wandb_metrics = wandb_metrics or {}; ...; "
                "await super().wandb_log(wandb_metrics)`.",
            )
        ]
    missed = {how: what for how, what in (observed.bare or {}).items() if what}
    if missed:
        by_what: dict[str, list[str]] = {}
        for how, what in missed.items():
            by_what.setdefault(what, []).append(how)
        seen = "; ".join(f"{' and '.join(hows)} {what}" for what, hows in by_what.items())
        return [
            Finding(
                "HC704",
                f"{cls.__name__}.wandb_log should call super().wandb_log(...) on every call; called as atroposlib "
                f"calls it every step, {seen}, so in a real run nothing is logged.",
                "call super unconditionally, not only when metrics were passed in: `wandb_metrics = wandb_metrics "
                "or {}; ...; await super().wandb_log(wandb_metrics)`.",
            )
        ]
    return []


@dataclass(frozen=True)
class EvalAgain:
    """``evaluate()`` run a second time, the model answering at once, between ``wandb_log`` calls: the train/*
    metrics before and after it (HC705) and whether it ran again at all (HC707). One run serves both checks, so the
    default catalogue pays for two evaluate() runs, not three (a third, calling the tools, runs under --thorough).

    ``error``: what evaluate() raised (``Type: message``); ``log_error``: what wandb_log raised (then ``idle`` and
    ``after`` are empty and HC707 runs evaluate() again itself)."""

    idle: dict[str, Any]
    after: dict[str, Any]
    requests: int
    error: str | None
    log_error: str | None

    @classmethod
    def build(cls, s: EnvSession) -> EvalAgain:
        try:
            idle, after, requests, error = _metrics_around_evaluate(s)
        except Exception as exc:  # wandb_log raised (HC704 reports it)
            return cls({}, {}, 0, None, f"{type(exc).__name__}: {exc}")
        return cls(idle, after, requests, error, None)


def _metrics_around_evaluate(s: EnvSession) -> tuple[dict[str, Any], dict[str, Any], int, str | None]:
    """(train/* metrics of an idle wandb_log, train/* metrics of the wandb_log right after an evaluate(), the
    model requests that evaluate() made, what it raised or None).

    Buffers are flushed first, so the only activity between the two logs is the evaluate() run. Keys that change
    between two idle logs (a rate over the clock, say) are left out of both: evaluate() did not move them. An
    exception from wandb_log propagates.
    """

    def train_only(metrics: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in metrics.items() if str(k).startswith("train/")}

    s.settle()  # a rollout an earlier check left running must not finish inside the evaluate() measured here
    error = None
    with spy_base_wandb_log(train_only) as seen:
        s.run_env(lambda env: env.wandb_log({}), phase="wandb_log")  # flush what training probes left
        s.run_env(lambda env: env.wandb_log({}), phase="wandb_log")  # idle baseline
        s.run_env(lambda env: env.wandb_log({}), phase="wandb_log")  # ... twice, to see what moves by itself
        first, idle = (seen[-2], seen[-1]) if len(seen) >= 2 else ({}, {})
        drifting = {k for k in idle if k in first and not _same(first[k], idle[k])}
        with (
            s.sandbox_leaks(),
            s.responding(lambda body: {"content": EVAL_ANSWER}) as made,
            s.scratch_cwd(),
        ):
            try:
                s.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        s.run_env(lambda env: env.wandb_log({}), phase="wandb_log")
        after = seen[-1] if seen else {}
    idle = {k: v for k, v in idle.items() if k not in drifting}
    return idle, {k: v for k, v in after.items() if k not in drifting}, len(made), error


def _moved(idle: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The metrics the evaluate() between the two logs added or changed."""
    return sorted(k for k in after if k not in idle or not _same(after[k], idle[k]))


def _same(a: Any, b: Any) -> bool:
    """Equal metric values; NaN equals NaN (an empty buffer's mean is NaN before and after)."""
    try:
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return bool(a == b)
    except Exception:  # numpy arrays and tables do not compare to a bool
        return a is b


@check(
    "HC705",
    "eval-not-in-train-metrics",
    "evaluate does not feed the training metrics",
    requires=("HC704", "HC202"),
    why=(
        "Eval scores mixed into train/* curves hide how training is really going (eval runs at temperature 0 on "
        "held-out items)."
    ),
    fix="Log eval results as eval/* (evaluate_log); keep train/* buffers for training rollouts only.",
)
def eval_not_in_train_metrics(s: EnvSession) -> list[Finding]:
    """evaluate() that logs (or returns) its own metrics under train/* keys (an error), or whose scores reach the
    buffers behind train/* metrics (a warning: the guide's own pattern, a compute_reward that appends to the buffer
    and is called by evaluate()): the training curves then mix held-out results in (usually at temperature 0), and
    look better or worse than training really is."""
    observed = s.observe(EvalObservation)
    returned = observed.returned if isinstance(observed.returned, dict) else {}
    for where, metrics in [("evaluate_log(metrics=...)", m) for m in observed.logged] + [
        ("evaluate()'s return value", returned)
    ]:
        keys = sorted(str(k) for k in (metrics or {}) if str(k).startswith("train/"))
        if keys:
            return [
                Finding(
                    "HC705",
                    f"evaluate() should report eval metrics under eval/* keys; {where} held {', '.join(keys[:4])}, "
                    "which lands in the training curves.",
                    f"rename them: {', '.join(repr('eval/' + k.split('/', 1)[1]) for k in keys[:2])} (and keep "
                    "train/* for training rollouts only).",
                )
            ]
    again = s.observe(EvalAgain)
    if again.log_error or again.error:
        raise Skip(f"evaluate() or wandb_log raised ({again.log_error or again.error}); see HC202/HC704")
    idle, after = again.idle, again.after
    changed = _moved(idle, after)
    if changed:
        # A finding must replay: a second evaluate() has to move the same metrics (a one-time effect, or work an
        # earlier probe left running that happened to finish meanwhile, does not).
        idle, after, _, error = _metrics_around_evaluate(s)
        if error:
            raise Skip(f"evaluate() or wandb_log raised ({error}); see HC202/HC704")
        changed = [k for k in _moved(idle, after) if k in changed]
    if not changed:
        return []
    shown = ", ".join(f"{k}={after[k]!r}"[:80] for k in changed[:4])
    return [
        Finding(
            "HC705",
            f"evaluate() should not feed the training metrics; after one evaluate() and no training, wandb_log "
            f"reported {shown}.",
            "keep eval results in their own buffer and log them as eval/* (or through evaluate_log); clear or "
            "leave untouched the lists your wandb_log turns into train/* metrics (e.g. append to the train buffer "
            "in collect_trajectory, or clear it at the end of evaluate()).",
            # A warning, not an error: this is the guide's own pattern (compute_reward appends to the buffer and
            # evaluate() calls compute_reward); the curve is skewed for one log, nothing is lost or broken.
            Severity.WARNING,
        )
    ]


def _judge_requests(requests: Sequence[Any]) -> tuple[int, int]:
    """(judge requests, rollouts) seen in evaluate(): a judge request is a fresh conversation (no assistant or
    tool message) whose user text quotes the model's answer; every other conversation is a rollout."""
    judged, rollouts = 0, set()
    for call in requests:
        messages = call.body.get("messages") or []
        if any(m.get("role") in ("assistant", "tool") for m in messages):
            continue  # a later turn of a rollout
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        text = " ".join(u for u in users if isinstance(u, str))
        if EVAL_ANSWER in text:
            judged += 1
        elif users:
            rollouts.add(text)
    return judged, len(rollouts)


@check(
    "HC706",
    "eval-judge-once",
    "evaluate asks the judge at most as often as the reward does",
    severity=Severity.WARNING,
    requires=("HC202", "HC409"),
    why=(
        "A judge asked again in evaluate() after the reward already judged doubles the cost of every eval, and "
        "its second verdict can disagree with the score."
    ),
    fix="Reuse the reward's verdict in evaluate() instead of asking the judge again.",
)
def eval_judge_once(s: EnvSession) -> list[Finding]:
    """An evaluate() that asks the LLM judge again after compute_reward already judged the rollout: double the
    cost of every eval, and two verdicts that can disagree (the guide's "calling an LLM judge twice")."""
    from hermes_envs.conformance._observations.scoring import ScoredProbes

    judged, rollouts = _judge_requests(_observed(s).requests)
    if not judged or not rollouts:
        return []  # no judge in evaluate(): nothing asked twice
    per_reward = max((e.model_requests for e in s.observe(ScoredProbes).rollouts), default=0)
    allowed = rollouts * max(per_reward, 1)
    if judged <= allowed:
        return []
    return [
        Finding(
            "HC706",
            f"evaluate() should ask the judge once per eval rollout (compute_reward asks it {per_reward} time(s)); "
            f"got {judged} judge requests for {rollouts} rollouts.",
            "keep the verdict compute_reward (or score_rollout) already got, e.g. return it with the score or "
            "store it per task id, instead of asking the judge again in evaluate().",
            Severity.WARNING,
        )
    ]


@check(
    "HC707",
    "eval-parity",
    "evaluate() works again when the trainer calls it again",
    requires=("HC202",),
    why=(
        "The trainer calls evaluate() every steps_per_eval: one that consumes its items or breaks its own state "
        "measures nothing after the first eval."
    ),
    fix="Iterate over the eval items without consuming them; reset per-eval state at the start of evaluate().",
)
def eval_parity(s: EnvSession) -> list[Finding]:
    """An ``evaluate()`` that works once only (it pops its eval items, exhausts an iterator, or leaves state that
    breaks the next run): the trainer calls it every ``steps_per_eval``, and every later eval measures nothing."""
    from hermes_envs.conformance._observations.rollouts import check_rollouts_possible
    from hermes_envs.conformance._probes import call_each_tool_then

    first = _observed(s)
    if first.error:
        raise NotApplicable(
            f"evaluate() already failed the first time ({first.error}); the checks above report it"
        )
    check_rollouts_possible(s)
    findings: list[Finding] = []
    again = s.observe(EvalAgain)  # the run HC705 measures (the model answers at once)
    error, made = again.error, again.requests
    if again.log_error or (s.settings.thorough and error is None and made):
        # wandb_log broke that run, or --thorough: once more, the model calling every tool first
        with s.sandbox_leaks(), s.responding(call_each_tool_then(EVAL_ANSWER)) as calls, s.scratch_cwd():
            try:
                s.run_env(lambda env: env.evaluate(), timeout=300, phase="evaluate")
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
        made = len(calls)
    if error is not None or not made:
        happened = f"raised {error}" if error else "made no model request at all"
        findings.append(
            Finding(
                "HC707",
                f"evaluate() should work every time the trainer calls it (every steps_per_eval); the first run asked "
                f"the model {len(first.requests)} time(s), the second {happened}.",
                "read the eval items without consuming them (iterate over self.eval_items, never .pop() them or "
                "keep one iterator across calls), and reset per-eval state at the start of evaluate().",
                subject="evaluate() run twice",
            )
        )
    return findings
