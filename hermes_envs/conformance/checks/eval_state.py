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

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._observations.scoring import GoldProbes
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.eval_grading import eval_items
from hermes_envs.conformance.checks.faults import WRONG_ANSWER, eval_run

#: How many items get_next_item is asked for in each arm.
NEXT_ITEMS = 4
#: A snapshot copies an attribute only when it holds at most this many plain values (a dataset of 100k rows is
#: training data, read but not written by evaluate(); copying it four times would cost more than it tells).
MAX_PLAIN_VALUES = 50_000

_PLAIN = (int, float, str, bytes, bool, type(None))


def _plain_size(value: Any, budget: int) -> int:
    """How many plain values ``value`` holds, or -1 when it holds something else (or more than ``budget``)."""
    if isinstance(value, _PLAIN):
        return 1
    if isinstance(value, dict):
        parts: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = list(value)
    else:
        return -1
    total = 1
    for part in parts:
        size = _plain_size(part, budget - total)
        if size < 0 or total + size > budget:
            return -1
        total += size
    return total


@dataclass(frozen=True)
class State:
    """The env's plain attributes (deep copies) and its random generators' states, and the global ones'."""

    plain: dict[str, Any]
    rngs: dict[str, Any]
    global_rng: Any

    @classmethod
    def of(cls, env: Any) -> State:
        plain: dict[str, Any] = {}
        rngs: dict[str, Any] = {}
        for name, value in vars(env).items():
            if isinstance(value, random.Random):
                rngs[name] = value.getstate()
            elif _plain_size(value, MAX_PLAIN_VALUES) >= 0:
                plain[name] = copy.deepcopy(value)
        return cls(plain, rngs, random.getstate())

    def put(self, env: Any, plain: dict[str, Any] | None = None) -> None:
        """Set ``env``'s attributes back to this state (``plain`` overriding some of them), RNGs included."""
        for name, value in {**self.plain, **(plain or {})}.items():
            setattr(env, name, copy.deepcopy(value))
        for name, state in self.rngs.items():
            rng = getattr(env, name, None)
            if isinstance(rng, random.Random):
                rng.setstate(state)
        random.setstate(self.global_rng)


def _next_items(s: EnvSession, state: State, changed: dict[str, Any] | None = None) -> list[str]:
    env = s.env()
    state.put(env, changed)
    out = []
    for _ in range(NEXT_ITEMS):
        out.append(repr(s.run_env(lambda e: e.get_next_item(), timeout=60, phase="items")))
    return out


def _gold_replies(s: EnvSession) -> dict[str, str]:
    """A reply for every eval prompt in the answer shape the training reward was proven to credit."""
    proven = next(
        (g.origin for g in s.observe(GoldProbes).gold if g.origin.source == "field" and g.origin.template),
        None,
    )
    if proven is None or proven.field is None or proven.template is None or proven.kind != "scalar":
        return {}
    replies = {}
    for prompt, item in eval_items(s, s.observe(EvalObservation).prompts).items():
        value = item.get(proven.field) if isinstance(item, dict) else None
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            replies[prompt] = proven.template.format(v=str(value).strip())
    return replies


def _answering(replies: dict[str, str]) -> Any:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        users = [m.get("content") for m in body.get("messages") or [] if m.get("role") == "user"]
        first = users[0] if users and isinstance(users[0], str) else ""
        n = max(1, int(body.get("n") or 1))
        return {"choices": [{"content": replies.get(first, WRONG_ANSWER)} for _ in range(n)]}

    return respond


def _diff(before: State, after: State) -> dict[str, Any]:
    return {
        name: value
        for name, value in after.plain.items()
        if name in before.plain and before.plain[name] != value
    }


def _culprits(s: EnvSession, before: State, changed: dict[str, Any], base: list[str]) -> Iterator[str]:
    """The changed attributes that alone change what get_next_item serves."""
    for name in changed:
        if _next_items(s, before, {name: changed[name]}) != base:
            yield name


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
    observed = s.observe(EvalObservation)
    if observed.error is not None or not observed.prompts:
        raise Skip("evaluate() raised or asked the model nothing (see HC202)")
    env = s.env()
    replies = _gold_replies(s)
    start = State.of(env)
    findings: list[Finding] = []
    for label, responder in (("training's answers", _answering(replies)), ("wrong answers", _answering({}))):
        if label == "training's answers" and not replies:
            continue
        before = State.of(env)
        run = eval_run(s, responder, "evaluate-state")
        after = State.of(env)
        changed = _diff(before, after)
        if run.error is not None or not changed:
            continue
        base = _next_items(s, before)
        again = _next_items(s, before)
        moved = _next_items(s, before, changed)
        if base != again or moved == base:
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
    start.put(env)
    return findings
