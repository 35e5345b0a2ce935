"""HC508 — an outage is not a wrong answer in the env's own state: a group dropped because the model server failed
must not move what the env records about how well the model answers (a curriculum window, a level, a success
rate) the way a group of wrong answers moves it.

The kit runs collect_trajectories(item) three times from the same state: the model answering the item's proven gold,
answering "I don't know.", and failing every request (HTTP 500). An attribute the two answered runs leave different
records the outcome; when the outage leaves it exactly where the wrong answers did, the env counted the outage as
a failed task: an outage then demotes a curriculum, or shows a good policy as a bad one. Attributes every run moves
the same way (counters of groups, timestamps) do not depend on the outcome and are not judged.
"""

from __future__ import annotations

import functools
from typing import Any

from hermes_envs.conformance._env_state import MISSING, State
from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._observations.scoring import GoldProbes, item_key
from hermes_envs.conformance._probes import Responder, say
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.faults import WRONG_ANSWER, failing_model, wrong_answers


def _group_run(s: EnvSession, start: State, item: Any, responder: Responder, phase: str) -> tuple[State, str]:
    """The env's state after collect_trajectories(item) from ``start`` with ``responder`` as the model, and what
    it raised ("" when nothing)."""
    env = s.env()
    start.put(env)
    raised = ""
    with s.sandbox_leaks(), s.responding(responder):
        try:
            s.run_env(lambda e: e.collect_trajectories(item), timeout=120, phase=phase)
        except Exception as exc:
            raised = f"{type(exc).__name__}: {exc}"
    return State.of(env), raised


def _gold_reply(s: EnvSession) -> tuple[Any, str]:
    """A probe item and a reply the env confirmed as its right answer (a text gold, not tool work)."""
    golds = s.observe(GoldProbes)
    items = {item_key(item) for item in probe_items(s)}
    for gold in golds.gold:
        origin = gold.origin
        if (
            origin.source == "field"
            and origin.template
            and origin.value is not None
            and item_key(gold.item) in items
            and golds.confirmed(gold)
        ):
            return gold.item, origin.template.format(v=origin.value)
    raise NotApplicable("no probe item has a confirmed text answer (see HC407), so no group of right answers")


@functools.cache
def _framework_attrs() -> frozenset[str]:
    """Attributes the framework's base classes set in __init__ (their own counters and buffers, such as the tool
    errors per rollout): the env author did not write them, so they are not judged."""
    import inspect
    import re

    from atroposlib.envs.base import BaseEnv

    from hermes_envs.env._base import HermesAgentBaseEnv

    names: set[str] = set()
    for cls in (BaseEnv, HermesAgentBaseEnv):
        try:
            names |= set(re.findall(r"self\.(\w+)\s*[:=]", inspect.getsource(cls.__init__)))
        except (OSError, TypeError):
            continue
    return frozenset(names)


def _shown(value: Any) -> str:
    return "(unset)" if value is MISSING else short(value, 60)


@check(
    "HC508",
    "faults-leave-state-alone",
    "a group dropped for a model-server error moves no outcome record the way wrong answers do",
    requires=("HC201",),
    why=(
        "A curriculum, a success-rate window or a difficulty level fed a dropped group as a score of 0 is demoted "
        "by every outage: training moves to easier items although the model answered nothing."
    ),
    fix=(
        "When collect_trajectories gets no group back (None: the model server failed), record nothing: "
        "`if group is None: return group, backlog` before updating the curriculum or metrics."
    ),
)
def faults_leave_state_alone(s: EnvSession) -> list[Finding]:
    """collect_trajectories that records a dropped group (the model server failed) in the env's outcome state as
    a group of wrong answers (a 0.0 appended to a curriculum window)."""
    from hermes_envs.conformance.checks.trajectory import eval_only

    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    item, reply = _gold_reply(s)
    env = s.env()
    start = State.of(env)
    try:
        right, raised_right = _group_run(s, start, item, say(reply), "trajectories")
        wrong, raised_wrong = _group_run(s, start, item, wrong_answers, "trajectories")
        if raised_right or raised_wrong:
            raise Skip(
                f"collect_trajectories(item) raised with a model that answers: {raised_right or raised_wrong}"
            )
        framework = _framework_attrs()
        # Attributes that record the outcome: the right and the wrong group leave them different, and the wrong
        # group moved them.
        outcome = [
            name
            for name in dict.fromkeys([*right.plain, *wrong.plain])
            if name not in framework
            and wrong.value(name) != start.value(name)
            and right.value(name) != wrong.value(name)
        ]
        if not outcome:
            return []
        outage, _raised = _group_run(s, start, item, failing_model, "faults")
    finally:
        start.put(env)
    moved = [name for name in outcome if outage.value(name) == wrong.value(name)]
    if not moved:
        return []
    shown = "; ".join(
        f"self.{n}: {_shown(start.value(n))} -> {_shown(outage.value(n))} (right answers: "
        f"{_shown(right.value(n))})"
        for n in moved[:3]
    )
    return [
        Finding(
            "HC508",
            "collect_trajectories(item) should record nothing about the model's answers when the model server "
            "fails (the group is dropped: there is no answer); with every model request failing (HTTP 500) it "
            f"moved the env's state exactly as a group answering {WRONG_ANSWER!r} does: {shown}. Every outage "
            "is recorded as a failed task (a curriculum demoted, a success rate lowered).",
            "skip the update when the group is None (`if group is None: return group, backlog`), or count "
            "outages apart from failures.",
            subject=f"self.{moved[0]}",
        )
    ]
