"""HC408, HC409 — how the reward runs: no hook blocks the event loop, a judge is asked at most once per rollout."""

from __future__ import annotations

from typing import Any

from hermes_envs.conformance._findings import Finding, Severity
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.scoring import GoldProbes, ScoredProbes
from hermes_envs.conformance._observations.training import SetupRun
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession

#: asyncio's own machinery: a stall sampled inside it was the event loop at work (a loaded machine), not a hook.
_LOOP_MACHINERY = ("selectors.py", "selector_events.py", "base_events.py")
#: setup() runs before any rollout, so blocking there only matters when very long: this many blocking_seconds.
SETUP_STALL_FACTOR = 10


@check(
    "HC408",
    "no-loop-blocking",
    "setup, compute_reward and evaluate do not block the event loop",
    requires=("HC201",),
    why="All rollouts share one event loop; a blocking call in a hook stalls every other rollout.",
    fix="await async APIs; ctx.aterminal / asyncio.to_thread for blocking work.",
)
def no_loop_blocking(s: EnvSession) -> list[Finding]:
    """Synchronous work (time.sleep, requests, subprocess.run, ctx.terminal) in async hooks and tools stalls every
    rollout. A stall spent inside ToolContext's synchronous methods (the contract's API) is a warning naming their
    awaitable twins; any other blocking is an error, and a time.sleep or a blocking socket's connect made on the
    loop by the env's code is one however short."""
    own_data = s.stand_in_note() is None  # else setup() failed: the rewards still run, on stand-in items
    if own_data:
        s.observe(SetupRun)
    if s.is_hermes_env():
        s.observe(ScoredProbes)
        s.observe(GoldProbes)
    if own_data:
        s.observe(EvalObservation)
    blocking = {c.where: c for c in s.watchdog.blocking if c.phase in _ROLLOUT_PHASES}
    stalls = _stall_findings(s, blocking)
    return stalls + _blocking_findings(s, {f.subject for f in stalls})


#: The phases whose blocking calls are the env's rollouts' business (setup runs alone, before any rollout).
_ROLLOUT_PHASES = {
    "rewards": "compute_reward",
    "gold": "compute_reward",
    "probes": "a rollout",
    "evaluate": "evaluate",
}


def _blocking_findings(s: EnvSession, reported: set[str]) -> list[Finding]:
    """One error per author line that called a thread-blocking function (time.sleep, a blocking socket's connect)
    on the event loop during a rollout, however short: no load makes code call it, so it needs no repeat."""
    by_site: dict[str, list[Any]] = {}
    for call in s.watchdog.blocking:
        if call.phase in _ROLLOUT_PHASES and call.where not in reported:
            by_site.setdefault(call.where, []).append(call)
    findings = []
    for where, calls in by_site.items():
        hooks = ", ".join(dict.fromkeys(_ROLLOUT_PHASES[c.phase] for c in calls))
        findings.append(
            Finding(
                "HC408",
                f"code run on the event loop should never block its thread; {where} called {calls[0].what} there "
                f"({len(calls)} time(s), during {hooks}): while it blocks, however briefly, every other rollout, "
                "tool call and model request of the process waits, so a group runs one rollout at a time.",
                "in async code await instead: `await asyncio.sleep(...)`, an async HTTP client (httpx.AsyncClient), "
                "or `await asyncio.to_thread(fn, ...)` for a blocking library; a tool that must block can be a "
                "plain `def` (hermes-envs runs those off the loop).",
                subject=where,
            )
        )
    return findings


def _stall_findings(s: EnvSession, blocking: dict[str, Any]) -> list[Finding]:
    """One finding per cause (the author's frame that held the loop), however many hooks and rollouts it
    stalled. An error needs the stall re-verified: the same frame stalled the loop again (a repeat), or the loop
    thread spent longer than the threshold ON a CPU in it (CPU time, which a loaded machine does not inflate), or
    the line called a thread-blocking function (``blocking``). A single wall-clock stall with none of these is a
    warning: the machine may have paused the process."""
    threshold = s.settings.blocking_seconds
    by_site: dict[str, list[Any]] = {}
    for stall in s.watchdog.stalls:
        if stall.phase not in ("setup", "rewards", "gold", "evaluate", "probes"):
            continue
        if stall.inner and any(f"({name}:" in stall.inner for name in _LOOP_MACHINERY):
            continue  # the loop itself was selecting / writing a socket: the machine stalled, not the env's code
        if stall.phase == "setup" and stall.seconds <= SETUP_STALL_FACTOR * threshold:
            continue  # nothing else runs during setup; only a very long stall matters (serve-mode heartbeats)
        by_site.setdefault(stall.where, []).append(stall)
    findings = []
    for where, stalls in sorted(by_site.items(), key=lambda kv: -max(st.seconds for st in kv[1])):
        worst = max(stalls, key=lambda st: st.seconds)
        phases = list(dict.fromkeys(st.phase for st in stalls))
        hooks = ", ".join(
            dict.fromkeys(
                {"rewards": "compute_reward", "gold": "compute_reward", "probes": "a rollout"}.get(ph, ph)
                for ph in phases
            )
        )
        cpu = worst.cpu_seconds
        call = blocking.get(where)
        verified = len(stalls) >= 2 or (cpu is not None and cpu > threshold) or call is not None
        evidence = (
            "stalled again at this line"
            if len(stalls) >= 2
            else f"one stall, in {call.what} called there"
            if call is not None
            else f"one stall, {cpu:.2f} s of it on a CPU"
            if cpu is not None
            else "one stall"
        )
        expectation = f"{hooks} should not block the event loop for more than {threshold:g} s (blocking_seconds); {where}"
        inner = f", inside {worst.inner}" if worst.inner and worst.inner != where else ""
        held = f" held it for up to {worst.seconds:.2f} s ({evidence})"
        if worst.sync_tool_calls and worst.seconds - worst.sync_tool_seconds <= threshold:
            # The contract's own synchronous ToolContext API (upstream's blocks the loop the same way): a warning.
            methods = ", ".join(f"ctx.{name}()" for name in worst.sync_tool_calls)
            twins = ", ".join(f"`await ctx.a{name}(...)`" for name in worst.sync_tool_calls)
            findings.append(
                Finding(
                    "HC408",
                    f"{expectation}{held}, {worst.sync_tool_seconds:.2f} s of it in ToolContext's synchronous "
                    f"{methods}, stalling every other rollout (a warning: the contract's ToolContext is "
                    "synchronous, and upstream's blocks the loop the same way).",
                    f"use the awaitable twins, which do the same in the rollout's sandbox off the event loop: "
                    f"{twins}.",
                    Severity.WARNING,
                    subject=where,
                )
            )
            continue
        only_setup = phases == ["setup"]
        caveat = ""
        if not verified and not only_setup:
            caveat = (
                " (a warning: seen once and mostly off-CPU, so a loaded machine pausing the process cannot be "
                "ruled out; a repeat or CPU time makes it an error)"
            )
        findings.append(
            Finding(
                "HC408",
                f"{expectation}{inner}{held}, stalling every other rollout{caveat}.",
                "await instead of blocking: `await asyncio.sleep(...)`, `await ctx.aterminal(...)` / "
                "`await asyncio.to_thread(fn, ...)` for blocking calls, an async HTTP client for remote judges.",
                Severity.ERROR if verified and not only_setup else Severity.WARNING,
                subject=where,
            )
        )
    return findings


@check(
    "HC409",
    "judge-once",
    "compute_reward asks the model (a judge) at most once per rollout",
    severity=Severity.WARNING,
    requires=("HC402",),
    why="Every judge call costs money and latency per rollout; two verdicts on one answer can disagree.",
    fix="Call the judge once per rollout and reuse its verdict (also in evaluate).",
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
            f"compute_reward should ask the judge at most once per rollout; on probe {worst.origin.probe!r} it made "
            f"{worst.model_requests} model requests for one call.",
            "call the judge once and keep its verdict (e.g. parse score and explanation from one reply); if "
            "evaluate() needs the verdict too, reuse the reward's instead of asking again.",
            Severity.WARNING,
            subject=f"probe {worst.origin.probe}",
        )
    ]
