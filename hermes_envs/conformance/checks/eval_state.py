"""HC714 — evaluate() leaves training alone: what get_next_item serves next is the same whether or not an
evaluate() ran before it.

An eval that feeds its results into the training state (a curriculum level moved by the rewards evaluate() computes,
a training cursor advanced by an eval that draws items through get_next_item, a replay buffer filled with eval
rollouts) makes training depend on when the trainer evaluates, and leaks held-out results into training decisions.
The kit snapshots the env's plain attributes (numbers, strings, containers of them) before and after evaluate()
answered every eval item the way training rewards, then asks get_next_item for the next items from the state
before, twice, and from the state before with evaluate()'s changes applied. Random generators are restored in
every arm: an eval that draws from the env's RNG shifts training's order only, which is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_envs.conformance._env_state import State
from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.eval_grading import GoldAnswerEval
from hermes_envs.conformance.checks.faults import WrongAnswerEval

#: How many items get_next_item is asked for in each arm.
NEXT_ITEMS = 4


def next_items(
    s: EnvSession, state: State, changed: dict[str, Any] | None = None, env: Any = None
) -> list[str]:
    """What get_next_item serves NEXT_ITEMS times from ``state`` (with ``changed`` applied), on the session's env
    or on ``env`` (another instance)."""
    target = s.env() if env is None else env
    state.put(target, changed)
    return [
        repr(s.run_env(lambda e: e.get_next_item(), timeout=60, phase="items", env=target))
        for _ in range(NEXT_ITEMS)
    ]


def _culprits(s: EnvSession, before: State, changed: dict[str, Any], base: list[str]) -> Iterator[str]:
    """The changed attributes that alone change what get_next_item serves."""
    for name in changed:
        if next_items(s, before, {name: changed[name]}) != base:
            yield name


def _runs(s: EnvSession) -> Iterator[tuple[str, State, State]]:
    """(how the eval items were answered, state before, state after) of the kit's evaluate() runs."""
    try:
        gold = s.observe(GoldAnswerEval)
    except (NotApplicable, Skip):
        pass
    else:
        if gold.run.error is None:
            yield "the answers training credits", gold.before, gold.after
    wrong = s.observe(WrongAnswerEval)
    if wrong.run.error is None:
        yield '"I don\'t know."', wrong.before, wrong.after


FIX = (
    "keep training state out of what evaluate() runs: update curricula and buffers in collect_trajectories "
    "(training only), not in compute_reward, and read eval items from the eval split, never get_next_item."
)


@check(
    "HC714",
    "eval-leaves-training-alone",
    "evaluate() does not change what training serves next",
    requires=("HC202", "HC203"),
    why=(
        "An evaluate() whose rollouts move the training state (a curriculum level, the training cursor, a buffer) "
        "makes training depend on when the trainer evaluates, and feeds held-out results into training."
    ),
    fix=FIX[0].upper() + FIX[1:],
)
def eval_leaves_training_alone(s: EnvSession) -> list[Finding]:
    """An evaluate() that changes the training state: compute_reward moving a curriculum (evaluate() calls it too),
    eval items drawn through get_next_item, eval rollouts queued for training. Seen as get_next_item serving other
    items from the state evaluate() left than from the state before it, with random generators restored."""
    if not s.is_hermes_env():
        raise NotApplicable("the env has no compute_reward(item, result, ctx) (not an agent env)")
    env = s.env()
    start = State.of(env)
    findings: list[Finding] = []
    try:
        for label, before, after in _runs(s):
            changed = before.changed_in(after)
            if not changed:
                continue
            base = next_items(s, before)
            if next_items(s, before) != base:
                continue  # get_next_item does not replay from the plain state: nothing to compare
            moved = next_items(s, before, changed)
            if moved == base:
                continue
            names = list(_culprits(s, before, changed, base)) or list(changed)
            what = "; ".join(
                f"self.{n}: {short(before.plain[n], 60)} -> {short(changed[n], 60)}" for n in names[:3]
            )
            findings.append(
                Finding(
                    "HC714",
                    f"evaluate() should leave the training state alone; run with every eval item answered with "
                    f"{label}, it changed {what}, and get_next_item then serves other items: "
                    f"{short(moved[0], 100)} instead of {short(base[0], 100)}. Training then depends on when the "
                    "trainer evaluates, and held-out results steer it.",
                    FIX,
                    subject=f"self.{names[0]}",
                )
            )
            break
    finally:
        start.put(env)
    return findings
