"""HC6xx — isolation: rollouts of different items do not share state, and each task's files stay in its sandbox."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.group import CollectedGroup
from hermes_envs.conformance._observations.origin import EnvOrigin, Origin
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import (
    EnvTranscripts,
    GoldProbes,
    ScoredProbes,
    ScoredRollout,
)
from hermes_envs.conformance._observations.training import TrainingScan
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.env._prompt import format_prompt_of


def _by_prompt(s: EnvSession, proven: tuple[ScoredRollout[Origin], ...]) -> dict[str, Any]:
    """The prompt of each proven item -> the responder that answers it correctly."""
    from hermes_envs.conformance._golds import gold_positives
    from hermes_envs.conformance._observations.scoring import prompt_text
    from hermes_envs.conformance._probes import play

    env = s.env()
    schemas, _ = s.tools()
    out = {}
    for entry in proven:
        item = entry.item
        prompt = format_prompt_of(env, item)
        if prompt in out:
            continue
        if isinstance(entry.origin, EnvOrigin):
            from hermes_envs.conformance._probes import env_transcripts

            out[prompt] = play(env_transcripts(env, item)["good"][entry.origin.index])
        else:
            # None when the item no longer yields that gold: the reward edited the item in place (HC405's finding).
            responder = next(
                (
                    p.responder
                    for p in gold_positives(item, schemas, prompt_text(env, item))
                    if p.name == entry.origin.name
                ),
                None,
            )
            if responder is not None:
                out[prompt] = responder
    return out


@check(
    "HC601",
    "no-shared-state",
    "concurrent rollouts of different items score as they do one at a time",
    # HC501: it compares the groups collect_trajectories returns, so a malformed group is HC501's one finding.
    requires=("HC401", "HC402", "HC403", "HC404", "HC501"),
    why=(
        "Rollouts of different items run concurrently; state on self makes them score against each "
        "other's answers."
    ),
    fix="Read everything from the `item` argument; keep no per-rollout state on self.",
)
def no_shared_state(s: EnvSession) -> list[Finding]:
    """Per-rollout state kept on ``self`` (e.g. the current answer set in format_prompt): concurrent rollouts of
    different items overwrite it and are scored against each other's answers."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    gold, own = s.observe(GoldProbes), s.observe(EnvTranscripts)
    answers = _by_prompt(s, gold.gold + own.good)
    if not answers:
        raise Skip("no transcript is known to score above the controls (see HC407), so a mix-up cannot show")
    env = s.env()
    proven = [e.item for e in gold.gold + own.good]
    # Proven items are answered correctly, the others get "I don't know.", so scores differ between items.
    items, prompts = [], set()
    for item in [*proven, *s.observe(TrainingScan).items]:
        prompt = format_prompt_of(env, item)
        if prompt not in prompts:
            items.append(item)
            prompts.add(prompt)
        if len(items) >= s.settings.concurrency_items:
            break

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        users = [m.get("content") for m in body.get("messages") or [] if m.get("role") == "user"]
        responder = answers.get(users[0]) if users else None
        return responder(body) if responder else {"content": "I don't know."}

    async def sequential(env: Any) -> list[list[float]]:
        out = []
        for item in items:
            group, _ = await env.collect_trajectories(item)
            out.append(sorted(group["scores"]) if group else [])
        return out

    async def concurrent(env: Any) -> list[list[float]]:
        import asyncio

        groups = await asyncio.gather(*(env.collect_trajectories(item) for item in items))
        return [sorted(g["scores"]) if g else [] for g, _ in groups]

    with s.responding(respond):
        one_by_one = s.run_env(sequential, phase="isolation")
        together = s.run_env(concurrent, phase="isolation")
    for item, a, b in zip(items, one_by_one, together):
        if [round(x, 6) for x in a] != [round(x, 6) for x in b]:
            return [
                Finding(
                    "HC601",
                    f"rollouts should score the same whether items run one at a time or concurrently; item "
                    f"{repr(item)[:140]} scored {a} alone but {b} alongside {len(items) - 1} other item(s).",
                    "keep no per-rollout state on self: read what you need from the `item` argument of "
                    "compute_reward (it is the rollout's own item), not from attributes set in format_prompt or "
                    "get_next_item.",
                    subject=f"item {repr(item)[:60]}",
                )
            ]
    return []


@check(
    "HC602",
    "sandbox-privacy",
    "the reward and prompt touch no file outside the rollout's sandbox",
    requires=("HC401", "HC402", "HC403"),
    why=(
        "Concurrent rollouts share the working directory and /tmp; reading there credits (or blames) a "
        "rollout for another one's files."
    ),
    fix="Go through ctx (read_file, terminal): the rollout's own sandbox.",
)
def sandbox_privacy(s: EnvSession) -> list[Finding]:
    """Rewards that read ``answer.txt`` relative to the working directory or a shared /tmp path: under concurrent
    rollouts one rollout is credited (or blamed) for another's files."""
    from hermes_envs.conformance._fileaudit import FileAudit, private_violation

    entries = s.observe(ScoredProbes).rollouts
    accesses: list[tuple[Any, str | None, str | None, str]] = []
    for entry in entries + s.observe(GoldProbes).gold + s.observe(EnvTranscripts).good:
        label = f"probe {entry.origin.name}"
        accesses.extend((a, box, root, label) for a, box, root in entry.accesses)
    env = s.env()
    audit = FileAudit()
    for item in probe_items(s):
        with audit.watching("format_prompt"):
            try:
                format_prompt_of(env, item)
            except Exception:
                pass  # HC301 reports it
    accesses.extend((a, None, None, "format_prompt") for a in audit.accesses)
    cwd = os.getcwd()
    findings = []
    seen: set[str] = set()
    for access, box, root, label in accesses:
        reason = private_violation(access, sandbox=box, sandbox_root=root, cwd=cwd)
        if reason is None or access.path in seen:
            continue
        seen.add(access.path)
        hook = "format_prompt" if access.phase == "format_prompt" else "compute_reward"
        verb = "writes" if access.write else "reads"
        findings.append(
            Finding(
                "HC602",
                f"{hook} should touch only the rollout's own sandbox; it {verb} {access.path!r} ({access.event}) on "
                f"{label}: {reason}.",
                "go through the ToolContext: `ctx.read_file(path)`, `ctx.write_file(...)`, `ctx.terminal(...)` act "
                "in the rollout's private sandbox; prepare per-task files there (e.g. ctx.write_file in the reward, "
                "or a tool call), never in a shared folder.",
                subject=access.path,
            )
        )
        if len(findings) >= 5:
            break
    return findings


@check(
    "HC603",
    "sandbox-cleanup",
    "every rollout's sandbox is cleaned up (training and evaluate)",
    requires=("HC501",),
    why=(
        "Leftover sandboxes fill the disk and keep processes running for the whole run; a reused task id would be "
        "credited for old files."
    ),
    fix="Create each ToolContext in try/finally and call ctx.cleanup() in the finally block.",
)
def sandbox_cleanup(s: EnvSession) -> list[Finding]:
    """Sandboxes left behind after a rollout (a ToolContext whose cleanup() never runs): files pile up for the
    length of a run, processes keep running, and a later rollout with a reused id is credited for old work."""
    findings = []
    observed: list[tuple[str, Sequence[Any]]] = [
        ("collect_trajectories", s.observe(CollectedGroup).leaked_sandboxes or [])
    ]
    if s.stand_in_note() is None:  # else setup() failed and evaluate() cannot run: only training is judged
        observed.append(("evaluate()", s.observe(EvalObservation).leaked_sandboxes or []))
    for where, leaked in observed:
        if leaked:
            findings.append(
                Finding(
                    "HC603",
                    f"{where} should clean up every sandbox it used; {len(leaked)} were left behind "
                    f"(task ids {', '.join(leaked[:3])}{', ...' if len(leaked) > 3 else ''}).",
                    "call ctx.cleanup() in a finally block for every ToolContext you create: "
                    "`ctx = ToolContext(task_id)`, `try: ... finally: ctx.cleanup()`.",
                    subject=where,
                )
            )
    return findings


@check(
    "HC604",
    "task-specific-paths",
    "the reward's ToolContext paths are private to the task",
    requires=("HC402",),
    why=(
        "Under upstream's local backend concurrent rollouts share the host's filesystem: one absolute path for "
        "every task (/tmp/answer.txt) grades each rollout on whichever wrote last."
    ),
    fix="Relative paths in the task's working directory (or the task id in the path); containers isolate.",
)
def task_specific_paths(s: EnvSession) -> list[Finding]:
    """A reward that reads or runs on one absolute path for every task (``ctx.read_file("/tmp/answer.txt")``,
    ``ctx.terminal("cat /tmp/work/out")``): under upstream's local backend concurrent rollouts share that file, so
    each is graded on whichever rollout wrote last. Not applicable under container backends (docker, modal, ...),
    where each task has a filesystem of its own."""
    from hermes_envs.conformance._ctxpaths import shared_paths, task_has_own_root

    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    backend = str(getattr(getattr(s.env(), "config", None), "terminal_backend", "local") or "local")
    if task_has_own_root(backend):
        raise NotApplicable(f"terminal_backend {backend!r} gives each task a container of its own")
    entries = (
        s.observe(ScoredProbes).rollouts + s.observe(GoldProbes).all_gold + s.observe(EnvTranscripts).good
    )
    uses = [
        (repr(e.item), e.task_id or "", method, path) for e in entries for method, path in e.ctx_paths or []
    ]
    shared = shared_paths(uses)
    findings = []
    for path, methods in sorted(shared.items())[:3]:
        findings.append(
            Finding(
                "HC604",
                f"the reward should use paths private to the rollout's task; it passed {path!r} to "
                f"ctx.{'/'.join(methods)}() for rollouts of different items, and under the {backend!r} backend "
                "(upstream's local sandbox) concurrent rollouts then share that one file, so each can be graded "
                "on another's work.",
                "use a path relative to the task's working directory (`ctx.read_file('answer.txt')`, and tell "
                "the model to write `answer.txt`), or put the task id in it; absolute paths are private only "
                "under container backends (terminal_backend='docker', 'modal', ...).",
                subject=path,
            )
        )
    return findings
