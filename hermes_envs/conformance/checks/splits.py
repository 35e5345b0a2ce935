"""Data (HC206): the train/eval split, and each item's content, is the same in every process that builds the env.

The trainer restarts the env (a crash, a resume, another node): a split drawn with the unseeded global random, a
salted ``hash()`` or a set's iteration order is drawn again, and items one run held out for eval are trained on by
the next. One process cannot see it; a fresh interpreter with another PYTHONHASHSEED can.
"""

from __future__ import annotations

from typing import Any

from hermes_envs.conformance._findings import Finding, Severity, Skip
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession


@check(
    "HC206",
    "split-stable-across-processes",
    "another process draws the same train/eval split (--thorough)",
    thorough=True,
    requires=("HC202",),
    why=(
        "The trainer restarts the env (a crash, a resume, another node); a split drawn again differently trains on "
        "items an earlier run evaluated on, and two runs' eval numbers measure different items."
    ),
    fix=(
        "Draw the split and every random part of an item with a fixed seed (`random.Random(0)`), a stable key "
        "(hashlib, not the salted `hash()`) or a sorted list, never the global random or a set's order."
    ),
)
def split_stable_across_processes(s: EnvSession) -> list[Finding]:
    """A split that changes when the env is built in another process (``random.shuffle`` unseeded, ``hash(q) %
    10`` with salted string hashes, ``list(set(...))``): after a restart, items the earlier run evaluated on are
    trained on, and eval numbers of two runs measure different items. Also items whose content is drawn from an
    unseeded random: the same item id asks another question in the other process."""
    from hermes_envs.conformance._observations.evaluation import EvalObservation
    from hermes_envs.conformance._observations.training import TrainingScan
    from hermes_envs.conformance._splits import item_key, scan_in_fresh_process

    if s.stand_in_note() is not None:
        raise Skip("needs the env's own split, which setup() did not load offline (see HC201)")
    here = s.observe(TrainingScan)
    if not here.items:
        raise Skip("no training item (see HC202/HC203)")
    held_out = set(s.observe(EvalObservation).prompts) - _training_prompts(s, here.items)
    s.load()
    try:
        with s.timed("split-process"):
            there = scan_in_fresh_process(s.path, s.class_name or "", s.settings, s.tmp / "split")
    except Exception as exc:
        raise Skip(f"the env could not be built in a fresh interpreter ({exc})") from None
    seed = there["seed"]
    finite = here.cycled and not here.stuck and bool(there.get("cycled"))
    prompts = [p for p in there.get("prompts") or [] if isinstance(p, str)]
    leaked = [p for p in prompts if p in held_out]
    if leaked:
        return [
            Finding(
                "HC206",
                f"the eval split should be the same in every process; {len(leaked)} of the {len(prompts)} training "
                f"prompts of a fresh interpreter (PYTHONHASHSEED={seed}) are eval prompts here, sent to the model by "
                f"evaluate() and given to no training rollout here (first: {_clip(leaked[0])}). After a restart the "
                "trainer trains on what the earlier run evaluated on."
                + ("" if finite else " (The training data did not cycle, so this may be a random draw.)"),
                "draw the split with a fixed seed (`random.Random(0).shuffle(items)`), from a stable key "
                "(`hashlib.sha256(id.encode()).digest()[0] % 10`, not the salted `hash()`), or from a sorted list, "
                "never from the global random or a set's order.",
                Severity.ERROR if finite else Severity.WARNING,
                subject="the split in two processes",
            )
        ]
    changed = _same_id_other_prompt(s, here.items, there)
    if changed is not None:
        ident, asked_here, asked_there = changed
        at = next(
            (i for i, (a, b) in enumerate(zip(asked_here, asked_there)) if a != b),
            min(len(asked_here), len(asked_there)),
        )
        start = max(0, at - 40)
        return [
            Finding(
                "HC206",
                f"an item should be the same task in every process; the training item {ident} is asked as "
                f"...{_clip(asked_here[start:], 120)} here and as ...{_clip(asked_there[start:], 120)} in a fresh "
                f"interpreter (PYTHONHASHSEED={seed}, another random state; the prompts differ from character "
                f"{at}). Its content is drawn from an unseeded random "
                "source (the global random module, a salted hash(), a set's order), so the data is not "
                "reproducible: it differs between runs, a resumed run trains on other tasks under the same ids, "
                "and eval numbers of two runs measure different items.",
                "build items deterministically: draw every random part from a seeded generator "
                "(`rng = random.Random(0)`; `rng.randint(...)`), never from the global `random.*`, `hash()` of "
                "a string or a set's iteration order.",
                subject=f"item {ident} in two processes",
            )
        ]
    if not finite:
        return []  # a generator or a random sampler: membership is not a fixed set to compare
    mine = {item_key(i) for i in here.items}
    theirs = set(there.get("keys") or [])
    if mine == theirs:
        return []
    only_there = sorted(theirs - mine)
    return [
        Finding(
            "HC206",
            f"the training split should be the same in every process; a fresh interpreter (PYTHONHASHSEED={seed}) "
            f"trains on {len(theirs)} items, {len(theirs - mine)} of which this process does not train on (e.g. "
            f"{_clip(only_there[0] if only_there else '')}).",
            "draw the split with a fixed seed or a stable key, never from the global random, the salted hash() or "
            "a set's order.",
            # Not shown to be an eval item of this process (it may be a deliberately random training subset).
            Severity.WARNING,
        )
    ]


def _same_id_other_prompt(s: EnvSession, items: Any, there: dict[str, Any]) -> tuple[str, str, str] | None:
    """(item id, prompt here, prompt there) for the first item whose id names another prompt in the other
    process, or None. Only ids unique in both processes and prompts stable in this one are compared (a random
    template is HC710's business)."""
    from hermes_envs.conformance._splits import item_id
    from hermes_envs.env._prompt import format_prompt_of

    if not s.is_hermes_env():
        return None
    ids_there = there.get("ids") or []
    prompts_there = there.get("prompts") or []
    theirs = {i: p for i, p in zip(ids_there, prompts_there) if i is not None and isinstance(p, str)}
    if len(theirs) != len([i for i in ids_there if i is not None]):
        return None  # an id repeats there: not an identity
    env = s.env()
    mine: dict[str, str] = {}
    for item in items:
        ident = item_id(item)
        if ident is None:
            continue
        if ident in mine:
            return None  # an id repeats here: not an identity
        try:
            prompt, again = format_prompt_of(env, item), format_prompt_of(env, item)
        except Exception:
            continue
        if isinstance(prompt, str) and prompt == again:
            mine[ident] = prompt
    for ident, prompt in mine.items():
        other = theirs.get(ident)
        if other is not None and other != prompt:
            return ident, prompt, other
    return None


def _training_prompts(s: EnvSession, items: Any) -> set[str]:
    """The prompts of this process's training items (an item both trained and evaluated on here, as an eval-only
    benchmark's are, is HC202's business, not a difference between processes)."""
    from hermes_envs.env._prompt import format_prompt_of

    if not s.is_hermes_env():
        return set()
    env = s.env()
    out: set[str] = set()
    for item in items:
        try:
            prompt = format_prompt_of(env, item)
        except Exception:
            continue
        if isinstance(prompt, str):
            out.add(prompt)
    return out


def _clip(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
