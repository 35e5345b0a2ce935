"""HC715 — a run resumed from the env's checkpoint serves what the run it was saved from would have served.

An env that overrides ``save_checkpoint`` promises that a restarted run continues where it stopped: atroposlib calls
``save_checkpoint(step)`` every ``checkpoint_interval`` steps, and on restart runs ``setup()`` then
``load_checkpoint()``, which sets each saved key back as an attribute. State that steers training (a curriculum level,
a window of recent scores) left out of the checkpoint is reset by every restart. The kit trains the env for a few
groups with the model answering each item's proven gold, saves a checkpoint, resumes a second instance from it, and
asks get_next_item what it serves from the resumed state, and from the resumed state with the trained env's values
of the attributes that differ (random generators equal in both arms).
"""

from __future__ import annotations

import inspect
from typing import Any

from hermes_envs.conformance._env_state import State
from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._golds import gold_value
from hermes_envs.conformance._observations.scoring import GoldProbes
from hermes_envs.conformance._probes import say
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance._text import short
from hermes_envs.conformance.checks.eval_state import next_items
from hermes_envs.conformance.checks.faults import WRONG_ANSWER

#: Groups the env is trained for before its checkpoint is saved (a curriculum window of 4 moves within them).
TRAINING_GROUPS = 8
#: The step the checkpoint is saved at and resumed from.
STEP = 8


def _overrides(env: Any, name: str) -> bool:
    """Whether the env's own classes (not atroposlib's BaseEnv) define ``name``."""
    from atroposlib.envs.base import BaseEnv

    return getattr(type(env), name, None) is not getattr(BaseEnv, name, None)


def _call(s: EnvSession, env: Any, name: str, *args: Any) -> None:
    """``env.name(*args)``, awaited on the session's loop when the env made it a coroutine."""
    with s.scratch_cwd():
        returned = getattr(env, name)(*args)
        if inspect.isawaitable(returned):
            s.run_env(lambda e, r=returned: r, timeout=60, phase="checkpoint", env=env)


def _train(s: EnvSession) -> None:
    """TRAINING_GROUPS groups of the session's env, the model answering each item with its proven gold."""
    proven = next(
        (g.origin for g in s.observe(GoldProbes).gold if g.origin.source == "field" and g.origin.template),
        None,
    )
    if proven is None or proven.field is None or proven.template is None:
        raise NotApplicable(
            "no answer shape was proven on the training items (see HC407), so no training to resume"
        )
    for _ in range(TRAINING_GROUPS):
        item = s.run_env(lambda e: e.get_next_item(), timeout=60, phase="items")
        value = gold_value(item, proven.field, proven.kind)
        reply = proven.template.format(v=value) if value else WRONG_ANSWER
        with s.sandbox_leaks(), s.responding(say(reply)):
            s.run_env(lambda e, i=item: e.collect_trajectories(i), timeout=120, phase="trajectories")


def _point_at(env: Any, folder: str) -> None:
    """Where atroposlib reads and writes the env's checkpoints (set by the trainer's registration in a real run)."""
    env.checkpoint_dir = folder
    env.wandb_prepend = "hermes-conformance"
    env.curr_step = STEP


@check(
    "HC715",
    "checkpoint-resumes-training",
    "a run resumed from the env's checkpoint serves the items the saved run would have served",
    requires=("HC201", "HC203"),
    why=(
        "State that steers training (a curriculum level, a window of recent scores) left out of save_checkpoint is "
        "reset by every restart: the resumed run trains on other items than the run it continues."
    ),
    fix="Save every attribute get_next_item reads in save_checkpoint (`data.update(level=self.level, ...)`).",
)
def checkpoint_resumes_training(s: EnvSession) -> list[Finding]:
    """save_checkpoint that leaves out state get_next_item reads (a curriculum level saved without its window, a
    cursor without the level): a run resumed from it serves other items than the run it continues."""
    env = s.env()
    if not _overrides(env, "save_checkpoint"):
        raise NotApplicable("the env does not override save_checkpoint (it keeps no state across a restart)")
    start = State.of(env)
    folder = str(s.tmp / "checkpoints")
    try:
        _train(s)
        trained = State.of(env)
        _point_at(env, folder)
        _call(s, env, "save_checkpoint", STEP)
    finally:
        start.put(env)
    resumed_env = s.another_env()
    s.run_env(lambda e: e.setup(), timeout=300, phase="setup", env=resumed_env)
    _point_at(resumed_env, folder)
    _call(s, resumed_env, "load_checkpoint")
    resumed = State.of(resumed_env)
    differ = {
        name: value
        for name, value in trained.plain.items()
        if resumed.value(name) != value and not name.startswith("checkpoint")
    }
    if not differ:
        return []
    base = next_items(s, resumed, env=resumed_env)
    if next_items(s, resumed, env=resumed_env) != base:
        raise Skip("get_next_item does not serve the same items twice from the same plain state")
    moved = next_items(s, resumed, differ, env=resumed_env)
    if moved == base:
        return []
    culprits = [n for n in differ if next_items(s, resumed, {n: differ[n]}, env=resumed_env) != base] or list(
        differ
    )
    shown = "; ".join(
        f"self.{n}: {short(differ[n], 60)} when saved, {short(resumed.plain.get(n, '(unset)'), 60)} resumed"
        for n in culprits[:3]
    )
    return [
        Finding(
            "HC715",
            f"a run resumed from the env's checkpoint should serve what the saved run would have served; after "
            f"{TRAINING_GROUPS} groups answered right, save_checkpoint({STEP}) then setup() and load_checkpoint() "
            f"on a new instance left {shown}, and get_next_item then serves {short(base[0], 100)} where the saved "
            f"state serves {short(moved[0], 100)}. Every restart resets this state.",
            f"add {', '.join(repr(n.split('.')[0]) for n in culprits[:3])} to the data save_checkpoint writes "
            "(`data.update(...)`, then `super().save_checkpoint(step, data)`).",
            subject=f"self.{culprits[0]}",
        )
    ]
