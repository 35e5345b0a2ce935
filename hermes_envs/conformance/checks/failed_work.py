"""HC414 — failed work credited: the best tool-using transcript the kit knows, replayed with every tool call failing.

A tool call is work the model asked for; its result says whether the work happened. A reward that reads the calls
the model MADE (the transcript's tool_calls) instead of their outcome (what the sandbox, the env's own state or the
tool's result holds) pays a refund the billing tool refused, a file write that raised, a hold that was never placed.
Every correct reward that reads the outcome scores such a replay like the transcript with the calls removed.

Four variants of one transcript are scored: as it is (tools run), with every tool result an error (the fake tool
backend fails each call), with the calls removed, and with the calls failing and a final message that answers
nothing. An error needs all of: full credit kept with every call failed, less without the calls (so the reward
reads them), and the failed calls alone, with no answer, beating every control and the kit's probe that calls every
tool (so it is not a small bonus for trying, nor a gate that still needs the right answer). Anything less is at
most a warning: shaping rewards for trying may be intended.
"""

from __future__ import annotations

import uuid
from typing import Any

from hermes_envs.conformance._cases import Case, fmt_score, json_safe, run_case, script_of
from hermes_envs.conformance._findings import Finding, NotApplicable, Severity
from hermes_envs.conformance._observations.origin import CheckOrigin, Origin
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import (
    Controls,
    EnvTranscripts,
    GoldProbes,
    ScoredProbes,
    ScoredRollout,
    item_key,
    numeric,
    score_rollout,
)
from hermes_envs.conformance._probes import play
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.env._prompt import initial_messages_of

#: What every tool call raises in the fault runs: the tool backend is down, so no work happened.
FAULT = "the tool backend is unavailable (the conformance kit failed this call on purpose)"
#: The final message of the "no answer" variant: it says nothing about the task.
NO_ANSWER = "Done."
#: Probes that call tools with made-up arguments: what merely trying the tools earns.
TRYING_PROBES = ("tool_then_answer", "tool_errors", "max_turns")
#: Scores closer than this are equal.
EPS = 1e-9


class _FailingTools:
    """A tool registry whose every call raises: the agent loop turns each into an error result."""

    async def adispatch(self, name: str, arguments: dict[str, Any], task_id: str) -> str:
        raise RuntimeError(FAULT)

    def dispatch(self, name: str, arguments: dict[str, Any], task_id: str) -> str:
        raise RuntimeError(FAULT)


def _has_calls(script: list[dict[str, Any]]) -> bool:
    return any(turn.get("tool_calls") for turn in script)


def _turns(script: list[dict[str, Any]]) -> int:
    """The turns a replay of ``script`` gets (a script ending on tool calls ran out of turns: exactly its own)."""
    return len(script) if script[-1].get("tool_calls") else max(len(script) + 1, 2)


def _without_calls(script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``script`` with every tool call removed (turns left with no text dropped)."""
    turns = [{"content": t.get("content") or ""} for t in script if (t.get("content") or "").strip()]
    return turns or [{"content": ""}]


def _no_answer(script: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``script`` with the text of its turns replaced by :data:`NO_ANSWER` (the calls kept), ending on it."""
    turns = [{**t, "content": ""} for t in script if t.get("tool_calls")]
    return [*turns, {"content": NO_ANSWER}]


def _failing_run(s: EnvSession, item: Any, script: list[dict[str, Any]]) -> tuple[Any, str]:
    """One rollout of ``item`` playing ``script`` through the real agent loop, every tool call failing."""
    from hermes_envs.agent import HermesAgentLoop

    env = s.env()
    schemas, names = s.tools()
    task_id = f"probe-failed-tools-{uuid.uuid4().hex[:8]}"
    loop = HermesAgentLoop(
        env.server,
        schemas,
        names,
        max_turns=_turns(script),
        task_id=task_id,
        temperature=1.0,
        tool_call_parser=getattr(env.config, "tool_call_parser", "hermes"),
        registry=_FailingTools(),
    )
    messages = initial_messages_of(env, item)
    with s.responding(play(script)):
        result = s.run_env(lambda _env: loop.run(messages), phase="failed-tools")
    return result, task_id


def _candidates(s: EnvSession) -> list[ScoredRollout[Origin]]:
    """Transcripts with tool calls known to score above the item's best control: the env's own good ones, the
    kit's golds, then any probe that did."""
    controls = s.observe(Controls)
    ceiling = s.settings.control_ceiling
    pool: list[ScoredRollout[Origin]] = [*s.observe(EnvTranscripts).good, *s.observe(GoldProbes).gold]
    pool += [r for r in s.observe(ScoredProbes).rollouts if r.origin.probe not in ("huge_output",)]
    out = []
    seen: set[str] = set()
    for entry in pool:
        script = script_of(entry.result.messages)
        if not (numeric(entry.score) and _has_calls(script)):
            continue
        if entry.score <= controls.best(entry.item, ceiling)[1] + EPS:
            continue
        key = item_key(entry.item) + repr(script)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def _trying(s: EnvSession, item: Any, entry: ScoredRollout[Origin]) -> float:
    """What calling the tools with made-up arguments earned on ``item`` (the kit's tool probes), 0.0 if nothing."""
    scores = [
        float(r.score)
        for r in s.observe(ScoredProbes).rollouts
        if r.origin.probe in TRYING_PROBES
        and item_key(r.item) == item_key(item)
        and numeric(r.score)
        and r is not entry
    ]
    return max(scores, default=0.0)


def _score(s: EnvSession, item: Any, result: Any, task_id: str) -> Any:
    return score_rollout(
        s, item, result, task_id, CheckOrigin("every tool call failing"), "failed-tools"
    ).score


def _judge_one(s: EnvSession, entry: ScoredRollout[Origin]) -> Finding | None:
    item, original = entry.item, float(entry.score)
    script = script_of(entry.result.messages)
    failed_result, failed_id = _failing_run(s, item, script)
    if not any(m.get("role") == "tool" for m in failed_result.messages):
        return None  # the replay made no call (a parser or turn budget the original did not hit)
    failed = _score(s, item, failed_result, failed_id)
    if not numeric(failed) or failed <= EPS:
        return None  # the failures cost the credit: the reward reads the outcome
    bare_result, bare_id = _run_plain(s, item, _without_calls(script))
    bare = _score(s, item, bare_result, bare_id)
    if not numeric(bare) or failed <= bare + EPS:
        return (
            None  # the calls earn nothing once they fail: the reward reads their outcome (or only the text)
        )
    empty_result, empty_id = _failing_run(s, item, _no_answer(script))
    empty = _score(s, item, empty_result, empty_id)
    bar = max(s.observe(Controls).best(item, s.settings.control_ceiling)[1], _trying(s, item, entry))
    if not numeric(empty) or empty <= bar + EPS:
        return (
            None  # failed calls with no answer earn nothing a control does not: a gate, not credit for work
        )
    calls = sum(len(t.get("tool_calls") or []) for t in script)
    full = failed >= original - EPS
    case = Case(
        rule="tool calls that all failed earn no credit: the reward reads the work's outcome, not the calls made",
        item=item,
        scripts={
            "transcript": script,
            "every call failed": [dict(m) for m in failed_result.messages],
            "calls removed": _without_calls(script),
            "every call failed, no answer": [dict(m) for m in empty_result.messages],
        },
        order=("transcript", "every call failed", "calls removed", "every call failed, no answer"),
        holds=(
            ("every call failed", ">=" if full else ">", "transcript" if full else "calls removed"),
            ("every call failed", ">", "calls removed"),
            ("every call failed, no answer", ">", bar),
        ),
    )
    replay = case.to_json() if json_safe(case.item) and json_safe(dict(case.scripts)) else None
    confirmed = full and replay is not None and run_case(s, case).violated
    shown = (
        f"as it is {original:g}; with every one of its {calls} tool call(s) failing (each result an error, no work "
        f"done) {fmt_score(failed)}; with the calls removed {fmt_score(bare)}; with the calls failing and the final "
        f"message {NO_ANSWER!r} {fmt_score(empty)}, above every control and what calling every tool with made-up "
        f"arguments earns ({bar:g})"
    )
    message = (
        f"compute_reward should credit the outcome of the model's tool calls, not the calls it made; "
        f"{entry.label} on item {short(item, 90)} scored {shown}. The reward reads the tool calls in the transcript "
        "(a failed tool call, a rejected or errored action, is credited as if the work was done)"
    )
    fix = (
        "read what the work left behind: the rollout's sandbox through ctx (files, command output, tests run by "
        "the reward), the env's own per-task state, or each call's tool result (skip a call whose result is an "
        "error); never count calls in result.messages as work done. If the call itself is the task's answer (a "
        "function-calling benchmark whose tools are never meant to do anything), ignore this check."
    )
    if confirmed:
        return Finding(
            "HC414",
            message + ", so a policy learns to issue calls that fail, and their failure costs it nothing.",
            fix,
            Severity.ERROR,
            subject=f"{entry.label}, every tool call failing",
            counterexample=replay,
        )
    return Finding(
        "HC414",
        message
        + " (a warning: "
        + (
            "part of the credit; a bonus for trying may be intended)."
            if not full
            else "the replay from the transcript alone did not reproduce it)."
        ),
        fix,
        Severity.WARNING,
        subject=f"{entry.label}, every tool call failing",
    )


def _run_plain(s: EnvSession, item: Any, script: list[dict[str, Any]]) -> tuple[Any, str]:
    from hermes_envs.conformance._observations.rollouts import run_probe

    return run_probe(s, item, play(script), _turns(script), "calls-removed", "failed-tools")


@check(
    "HC414",
    "failed-work-credited",
    "tool calls that all failed earn no credit (the reward reads the work's outcome)",
    requires=(*SCORE_PREREQUISITES, "HC404"),
    why=(
        "A reward that counts the tool calls in the transcript pays for work that never happened: a refund the "
        "billing tool refused, a write that raised, a hold never placed. The policy learns to issue calls, not to "
        "make them succeed. Evidence: the env's best tool-using transcript keeps full credit with every tool result "
        "an error, and those failed calls with no answer still beat every control (replayable). Only part of the "
        "credit kept is a warning (a bonus for trying may be intended); a gate that also needs the right answer, or a "
        "bonus no larger than what calling every tool with made-up arguments earns, passes."
    ),
    fix=(
        "Read the outcome: the sandbox through ctx, the env's own per-task state, or each call's tool result "
        "(skip errors); never count calls in result.messages as work done."
    ),
)
def failed_work_credited(s: EnvSession) -> list[Finding]:
    """Rewards that credit the tool calls the model made without checking they succeeded (a refund the billing
    tool refused, a write that raised, a hold never placed): the best tool-using transcript the kit knows keeps its
    full score when every tool call returns an error, loses it when the calls are removed, and the failed calls
    with no answer at all still beat every control."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    probe_items(s)
    found = _candidates(s)
    if not found:
        raise NotApplicable(
            "no transcript with tool calls is known to score above the controls (give the env "
            "conformance_transcripts(item) with a good tool-using transcript to check it)"
        )
    findings: list[Finding] = []
    judged: set[str] = set()
    for entry in found:
        if item_key(entry.item) in judged:
            continue
        judged.add(item_key(entry.item))
        finding = _judge_one(s, entry)
        if finding is not None:
            findings.append(finding)
            break
        if not s.settings.thorough:
            break
    return findings
