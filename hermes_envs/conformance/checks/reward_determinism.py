"""HC404 — the reward is deterministic: the same score twice in one process, and in other processes whatever
their PYTHONHASHSEED (set iteration order)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_envs.conformance._findings import Finding
from hermes_envs.conformance._observations.origin import CheckOrigin, Origin
from hermes_envs.conformance._observations.rollouts import run_probe
from hermes_envs.conformance._observations.scoring import (
    GoldProbes,
    ItemControls,
    ScoredProbes,
    ScoredRollout,
    numeric,
    score_rollout,
)
from hermes_envs.conformance._registry import SCORE_PREREQUISITES, check
from hermes_envs.conformance._session import EnvSession

if TYPE_CHECKING:
    from hermes_envs.conformance._hashseed import Workers


@dataclass(frozen=True)
class _HashSeedWorkers:
    """Where the reward builds a set, and the other interpreters started to score its transcripts (None when it
    builds none): made once per session, by HC404's ``prepare`` as the checks begin or by HC404 itself."""

    where: str | None
    workers: Workers | None

    @classmethod
    def build(cls, s: EnvSession) -> _HashSeedWorkers:
        import hermes_envs.conformance._hashseed as hashseed

        where = hashseed.reward_set_use(s.module, s.load())
        if where is None:
            return cls(None, None)
        workers = hashseed.Workers(s.path, s.load().__name__, s.tmp / "hashseed")
        s.harness.on_close(workers.close)
        return cls(where, workers)


def _start_workers(s: EnvSession) -> None:
    """HC404's ``prepare``: the other interpreters import the env while the in-process checks run (~5 s of CPU
    each, which the check otherwise waits for)."""
    s.observe(_HashSeedWorkers)


@check(
    "HC404",
    "reward-deterministic",
    "compute_reward gives the same score for the same input",
    requires=SCORE_PREREQUISITES,
    why="Random or time-dependent scores turn the advantage into noise.",
    fix="No randomness in the reward; a judge at temperature 0.",
    prepare=_start_workers,
)
def reward_deterministic(s: EnvSession) -> list[Finding]:
    """Rewards with randomness or clock dependence (e.g. noise added "to break ties"): the advantage becomes noise.
    Also rewards whose score depends on hash order (``list(set(words))``, ``max(set(xs), key=...)``): the same
    transcript scores differently in another process; when the reward's code builds a set, its text-only
    transcripts are scored again in two fresh interpreters with other PYTHONHASHSEEDs."""
    findings = _same_in_one_process(s)
    return findings or _same_across_processes(s)


def _same_across_processes(s: EnvSession) -> list[Finding]:
    import json

    started = s.observe(_HashSeedWorkers)
    where, workers = started.where, started.workers
    if where is None or workers is None:
        return []
    entries: list[ScoredRollout[Origin]] = []
    for entry in (
        s.observe(ScoredProbes).rollouts + s.observe(GoldProbes).all_gold + s.observe(ItemControls).rollouts
    ):
        messages = entry.result.messages
        if not numeric(entry.score) or any(m.get("role") == "tool" for m in messages):
            continue  # a rollout with tool calls needs its sandbox, which another process does not have
        try:
            json.dumps([entry.item, messages])
        except (TypeError, ValueError):
            continue
        entries.append(entry)
    entries = [*entries[:60], *_other_shapes(s)]
    if not entries:
        return []
    found = _differs_by_set_order(s, entries, where)
    if found:
        return found
    cases = [
        {
            "item": e.item,
            "messages": e.result.messages,
            "turns_used": e.result.turns_used,
            "finished_naturally": e.result.finished_naturally,
        }
        for e in entries
    ]
    with s.timed("hashseed"):
        workers.send(cases)
        elsewhere = workers.collect()
    for seed, scores in sorted(elsewhere.items()):
        for scored, other in zip(entries, scores):
            if numeric(other) and abs(float(other) - float(scored.score)) > 1e-9:
                name = scored.label
                return [
                    Finding(
                        "HC404",
                        f"compute_reward should give the same score in every process; on {name} it scored "
                        f"{scored.score!r} here and {other!r} in an interpreter with PYTHONHASHSEED={seed}. "
                        f"The reward builds {where}: the iteration order of a set of strings changes from one "
                        "process to the next.",
                        _HASH_FIX,
                        subject=name,
                    )
                ]
    return []


def _other_shapes(s: EnvSession) -> list[ScoredRollout[CheckOrigin]]:
    """Each proven scalar gold in every answer shape (a set of the reply's words changes with its length)."""
    from hermes_envs.conformance._golds import ANSWER_FORMATS
    from hermes_envs.conformance._probes import say

    out = []
    for gold in s.observe(GoldProbes).gold:
        if gold.origin.kind != "scalar" or not gold.origin.template:
            continue
        for _shape, template in ANSWER_FORMATS:
            if template != gold.origin.template:
                result, task_id = run_probe(
                    s, gold.item, say(template.format(v=gold.origin.value)), 3, "shape", "gold"
                )
                name = f"field {gold.origin.field!r} answered as {template.format(v=gold.origin.value)!r}"
                entry = score_rollout(s, gold.item, result, task_id, CheckOrigin(name), "gold")
                if numeric(entry.score):
                    out.append(entry)
    return out


def _differs_by_set_order(
    s: EnvSession, entries: Sequence[ScoredRollout[Origin]], where: str
) -> list[Finding]:
    """Score ``entries`` with the env module's sets iterating sorted, then reversed: a difference is hash order."""
    import copy

    from hermes_envs.conformance._hashseed import set_order
    from hermes_envs.tools import ToolContext, cleanup_sandbox

    env = s.env()
    for entry in entries:
        scores: list[Any] = []
        for reverse in (False, True):
            ctx = ToolContext(f"set-order-{len(scores)}-{id(entry)}")
            try:
                with set_order(s.module, reverse):
                    result, item = copy.deepcopy(entry.result), entry.item
                    scores.append(
                        s.run_env(
                            lambda _env, r=result, c=ctx, i=item: env.compute_reward(i, r, c), phase="rewards"
                        )
                    )
            except Exception:
                scores.append(None)
            finally:
                ctx.cleanup()
                cleanup_sandbox(ctx.task_id)
        if all(numeric(x) for x in scores) and abs(scores[0] - scores[1]) > 1e-9:
            name = entry.label
            return [
                Finding(
                    "HC404",
                    f"compute_reward should not depend on the order a set iterates in; on {name} it scored "
                    f"{scores[0]!r} with the reward's sets iterating in one order and {scores[1]!r} in another. "
                    f"The reward builds {where}; a set of strings iterates in a different order in every process "
                    "(PYTHONHASHSEED), so the same transcript scores differently from run to run.",
                    _HASH_FIX,
                    subject=name,
                )
            ]
    return []


_HASH_FIX = (
    "never let a set's order decide: sort it (`sorted(set(words))`), compare sets as sets (`set(got) == "
    "set(want)`), keep lists as lists to compare in order, and break ties by a rule (`max(sorted(xs), key=...)`)."
)


def _same_in_one_process(s: EnvSession) -> list[Finding]:
    for entry in s.observe(ScoredProbes).rollouts:
        first, second = entry.score, entry.score2
        if numeric(first) and numeric(second) and abs(first - second) > 1e-9:
            return [
                Finding(
                    "HC404",
                    f"compute_reward should return the same score when called twice on the same item and transcript; "
                    f"on probe {entry.origin.probe!r} got {first!r} then {second!r}.",
                    "remove randomness and time from the reward (no random.*, time.time(), unseeded sampling); if a "
                    "judge samples, call it at temperature 0. Do not add noise to break ties: a group of equal scores "
                    "carries no signal and is meant to be dropped.",
                    subject=f"probe {entry.origin.probe}",
                )
            ]
    return []
