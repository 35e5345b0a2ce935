"""HC408, HC409 — how the reward runs: no hook blocks the event loop, a judge is asked at most once per rollout."""

from __future__ import annotations

from hermes_envs.conformance.findings import Finding, Severity
from hermes_envs.conformance.observations.evaluation import EvalObservation
from hermes_envs.conformance.observations.scoring import GoldProbes, ScoredProbes
from hermes_envs.conformance.observations.training import SetupRun
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession

#: asyncio's own machinery: a stall sampled inside it was the event loop at work (a loaded machine), not a hook.
_LOOP_MACHINERY = ("selectors.py", "selector_events.py", "base_events.py")
#: setup() runs before any rollout, so blocking there only matters when very long: this many blocking_seconds.
SETUP_STALL_FACTOR = 10


@check(
    "HC408",
    "no-loop-blocking",
    "setup, compute_reward and evaluate do not block the event loop",
    requires=("HC201",),
)
def no_loop_blocking(s: EnvSession) -> list[Finding]:
    """Synchronous work (time.sleep, requests, subprocess.run, ctx.terminal) in async hooks stalls every rollout.
    A stall spent inside ToolContext's synchronous methods (the contract's API) is a warning naming their awaitable
    twins; any other blocking is an error."""
    own_data = s.stand_in_note() is None  # else setup() failed: the rewards still run, on stand-in items
    if own_data:
        s.observe(SetupRun)
    if s.is_hermes_env():
        s.observe(ScoredProbes)
        s.observe(GoldProbes)
    if own_data:
        s.observe(EvalObservation)
    findings = []
    seen: set[tuple[str, str]] = set()
    for stall in sorted(s.watchdog.stalls, key=lambda st: -st.seconds):
        key = (stall.phase, stall.where)
        if key in seen or stall.phase not in ("setup", "rewards", "gold", "evaluate", "probes"):
            continue
        seen.add(key)
        if stall.inner and any(f"({name}:" in stall.inner for name in _LOOP_MACHINERY):
            continue  # the loop itself was selecting / writing a socket: the machine stalled, not the env's code
        if stall.phase == "setup" and stall.seconds <= SETUP_STALL_FACTOR * s.settings.blocking_seconds:
            continue  # nothing else runs during setup; only a very long stall matters (serve-mode heartbeats)
        hook = {"rewards": "compute_reward", "gold": "compute_reward", "probes": "a rollout"}.get(
            stall.phase, stall.phase
        )
        severity = Severity.WARNING if stall.phase == "setup" else Severity.ERROR
        expectation = (
            f"{hook} should not block the event loop for more than {s.settings.blocking_seconds:g} s "
            f"(blocking_seconds); {stall.where}"
        )
        inner = f", inside {stall.inner}" if stall.inner and stall.inner != stall.where else ""
        held = f" held it for {stall.seconds:.2f} s"
        if stall.sync_tool_calls and stall.seconds - stall.sync_tool_seconds <= s.settings.blocking_seconds:
            # The contract's own synchronous ToolContext API (upstream's blocks the loop the same way): a warning.
            methods = ", ".join(f"ctx.{name}()" for name in stall.sync_tool_calls)
            twins = ", ".join(f"`await ctx.a{name}(...)`" for name in stall.sync_tool_calls)
            findings.append(
                Finding(
                    "HC408",
                    f"{expectation}{held}, {stall.sync_tool_seconds:.2f} s of it in ToolContext's synchronous {methods}, "
                    "stalling every other rollout (a warning: the contract's ToolContext is synchronous, and "
                    "upstream's blocks the loop the same way).",
                    f"use the awaitable twins, which do the same in the rollout's sandbox off the event loop: "
                    f"{twins}.",
                    Severity.WARNING,
                    subject=stall.where,
                )
            )
            continue
        findings.append(
            Finding(
                "HC408",
                f"{expectation}{inner}{held}, stalling every other rollout.",
                "await instead of blocking: `await asyncio.sleep(...)`, `await ctx.aterminal(...)` / "
                "`await asyncio.to_thread(fn, ...)` for blocking calls, an async HTTP client for remote judges.",
                severity,
                subject=stall.where,
            )
        )
    return findings


@check(
    "HC409",
    "judge-once",
    "compute_reward asks the model (a judge) at most once per rollout",
    severity=Severity.WARNING,
    requires=("HC402",),
)
def judge_once(s: EnvSession) -> list[Finding]:
    """A reward that calls its LLM judge more than once per rollout: double the cost and latency of every group,
    and two verdicts that can disagree (the guide's "calling an LLM judge twice")."""
    worst = max(s.observe(ScoredProbes).rollouts, key=lambda e: e.model_requests, default=None)
    if worst is None or worst.model_requests <= 1:
        return []
    return [
        Finding(
            "HC409",
            f"compute_reward should ask the judge at most once per rollout; on probe {worst.probe!r} it made "
            f"{worst.model_requests} model requests for one call.",
            "call the judge once and keep its verdict (e.g. parse score and explanation from one reply); if "
            "evaluate() needs the verdict too, reuse the reward's instead of asking again.",
            Severity.WARNING,
            subject=f"probe {worst.probe}",
        )
    ]
