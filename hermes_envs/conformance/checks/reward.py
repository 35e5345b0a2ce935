"""HC4xx — rewards: ``compute_reward`` reads AgentResult as an object, never raises, returns a float in [0, 1]."""

from __future__ import annotations

import math
import traceback
from typing import Any

from hermes_envs.conformance.findings import Finding, NotApplicable
from hermes_envs.conformance.probes import PROBES, ContractViolation, StrictAgentResult
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession


def _reward_site(exc: BaseException) -> str:
    """``file:line: code`` of the deepest frame outside hermes-envs and site-packages (the author's line)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "site-packages" in frame.filename or "/hermes_envs/" in frame.filename:
            continue
        return f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}: {(frame.line or '').strip()}"
    return ""


def scored_probes(s: EnvSession) -> list[dict[str, Any]]:
    """Call compute_reward on a strict copy of every probe transcript; cached.

    Each entry adds ``score``, ``error`` (str), ``exc``, ``violations`` (misuses seen by the strict result).
    """
    if "scored" in s.facts:
        return s.facts["scored"]
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    env = s.env()
    out = []
    for probe in s.probe_transcripts():
        strict = StrictAgentResult.of(probe["result"])
        entry = dict(probe, score=None, error=None, exc=None, violations=[])
        ctx = ToolContext(probe["task_id"])
        try:
            entry["score"] = s.run_env(lambda _env, strict=strict, ctx=ctx, item=probe["item"]:
                                       env.compute_reward(item, strict, ctx))
        except Exception as exc:
            entry["exc"] = exc
            entry["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            ctx.cleanup()
            cleanup_sandbox(probe["task_id"])
        entry["violations"] = list(strict.violations)
        out.append(entry)
    s.facts["scored"] = out
    return out


@check("HC401", "result-is-object", "compute_reward uses AgentResult as an object", requires=("HC201",))
def result_is_object(s: EnvSession) -> list[Finding]:
    """Rewards that index AgentResult like a dict or read final_response/tool_calls/tools_used (it has none)."""
    findings = []
    seen: set[str] = set()
    for entry in scored_probes(s):
        problems = list(entry["violations"])
        if isinstance(entry["exc"], ContractViolation) and str(entry["exc"]) not in problems:
            problems.append(str(entry["exc"]))
        if isinstance(entry["exc"], (TypeError, AttributeError)) and "subscriptable" in str(entry["exc"]):
            problems.append(f"{entry['error']} — AgentResult is a dataclass, not a dict.")
        for problem in problems:
            if problem in seen:
                continue
            seen.add(problem)
            site = _reward_site(entry["exc"]) if entry["exc"] is not None else ""
            swallowed = "" if entry["exc"] is not None else " (your reward caught the error and went on, so " \
                "upstream would score every rollout 0.0 without a word)"
            findings.append(Finding(
                "HC401",
                f"compute_reward should read AgentResult's attributes; {problem}{swallowed}"
                + (f" At {site}." if site else ""),
                "use result.messages / result.turns_used / result.finished_naturally / result.tool_errors; "
                "`from hermes_envs import final_response` gives the final answer.",
                subject=f"probe {entry['probe']}",
            ))
    return findings


@check("HC402", "reward-never-raises", "compute_reward never raises on transcripts the loop can produce",
       requires=("HC201",))
def reward_never_raises(s: EnvSession) -> list[Finding]:
    """Rewards that crash on an empty reply, tool errors, max-turns truncation, unicode or a huge output."""
    findings = []
    seen: set[str] = set()
    for entry in scored_probes(s):
        exc = entry["exc"]
        if exc is None or isinstance(exc, ContractViolation):
            continue  # contract misuse is HC401's finding
        key = f"{type(exc).__name__}:{_reward_site(exc)}"
        if key in seen:
            continue
        seen.add(key)
        about = PROBES[entry["probe"]][2]
        hint = ""
        if isinstance(exc, AttributeError) and "'dict' object has no attribute" in str(exc):
            hint = (" Tool calls in result.messages are dicts: use tc['function']['name'], not tc.function.name.")
        site = _reward_site(exc)
        findings.append(Finding(
            "HC402",
            f"compute_reward should score every transcript the agent loop can produce; on probe "
            f"{entry['probe']!r} ({about}) it raised {entry['error']}" + (f" at {site}" if site else "") + "."
            + hint,
            "handle empty content (\"\"), missing tool calls, tool error results and truncated rollouts; a reward "
            "that raises is logged and scored 0.0, which hides the bug during training.",
            subject=f"probe {entry['probe']}",
        ))
    return findings


@check("HC403", "reward-range", "compute_reward returns a finite float in [0, 1]", requires=("HC201",))
def reward_range(s: EnvSession) -> list[Finding]:
    """Scores that are None, a bool, a string, NaN/inf, or outside [0, 1] (the trainer expects 0..1 floats)."""
    findings = []
    seen: set[str] = set()
    for entry in scored_probes(s):
        if entry["exc"] is not None:
            continue
        score = entry["score"]
        problem = None
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            problem = f"got {score!r} ({type(score).__name__})"
        elif not math.isfinite(score):
            problem = f"got {score!r}"
        elif not 0.0 <= score <= 1.0:
            problem = f"got {score!r}, outside [0, 1]"
        if problem and problem not in seen:
            seen.add(problem)
            findings.append(Finding(
                "HC403",
                f"compute_reward should return a finite float in [0, 1]; on probe {entry['probe']!r} {problem}.",
                "return float(...) and clamp: `return max(0.0, min(1.0, score))`.",
                subject=f"probe {entry['probe']}",
            ))
    return findings
