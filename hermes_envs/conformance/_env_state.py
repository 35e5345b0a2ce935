"""Snapshots of an env's plain state: its attributes holding numbers, strings and containers of them (deep
copies), the same attributes of objects of the author's own classes it holds (a curriculum object's level, keyed
``"curriculum.level"``), and the states of its random generators and of the global one, to put the env back into a
state it was in (HC714 asks get_next_item what it serves from the state before and after evaluate())."""

from __future__ import annotations

import copy
import random
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_PLAIN_VALUES", "MISSING", "State"]

#: A snapshot copies an attribute only when it holds at most this many plain values (a dataset of 100k rows is
#: training data, read but not written by evaluate(); copying it on every put would cost more than it tells).
MAX_PLAIN_VALUES = 50_000

_PLAIN = (int, float, str, bytes, bool, type(None))
#: What :meth:`State.value` gives for an attribute the state does not hold.
MISSING = object()


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


def _authors_object(value: Any) -> bool:
    """Whether ``value`` is an instance of a class defined in the author's code (not a library's, not ours)."""
    from hermes_envs.conformance._watchdog import is_library_file

    if isinstance(value, type) or not hasattr(value, "__dict__"):
        return False
    module = sys.modules.get(type(value).__module__)
    file = getattr(module, "__file__", None)
    return isinstance(file, str) and not is_library_file(file)


def _owner(env: Any, name: str) -> tuple[Any, str]:
    """The object holding attribute ``name`` (``"curriculum.level"``: env.curriculum) and the attribute's own name."""
    head, _, tail = name.rpartition(".")
    return (getattr(env, head, None) if head else env), tail


@dataclass(frozen=True)
class State:
    """The env's plain attributes (deep copies) and its random generators' states, and the global one's."""

    plain: dict[str, Any]
    rngs: dict[str, Any]
    global_rng: Any

    @classmethod
    def of(cls, env: Any) -> State:
        plain: dict[str, Any] = {}
        rngs: dict[str, Any] = {}
        objects = [("", env)] + [(f"{n}.", v) for n, v in vars(env).items() if _authors_object(v)]
        for prefix, holder in objects:
            for name, value in vars(holder).items():
                if isinstance(value, random.Random):
                    rngs[prefix + name] = value.getstate()
                elif _plain_size(value, MAX_PLAIN_VALUES) >= 0:
                    plain[prefix + name] = copy.deepcopy(value)
        return cls(plain, rngs, random.getstate())

    def value(self, name: str) -> Any:
        """The plain attribute ``name`` in this state, or :data:`MISSING`."""
        return self.plain.get(name, MISSING)

    def changed_in(self, later: State) -> dict[str, Any]:
        """The plain attributes whose value in ``later`` differs from this state's (``later``'s values)."""
        return {
            name: value
            for name, value in later.plain.items()
            if name in self.plain and self.plain[name] != value
        }

    def put(self, env: Any, plain: dict[str, Any] | None = None) -> None:
        """Set ``env``'s attributes back to this state (``plain`` overriding some of them), RNGs included. Only
        attributes whose value differs are replaced: an object shared with something else the env holds (a list an
        iterator reads) stays the same object when it did not change."""
        for name, value in {**self.plain, **(plain or {})}.items():
            holder, own = _owner(env, name)
            if holder is None:
                continue
            try:
                same = vars(holder).get(own, MISSING) == value
            except Exception:  # a comparison that raises (numpy arrays inside): replace it
                same = False
            if not same:
                setattr(holder, own, copy.deepcopy(value))
        for name, state in self.rngs.items():
            holder, own = _owner(env, name)
            rng = getattr(holder, own, None)
            if isinstance(rng, random.Random):
                rng.setstate(state)
        random.setstate(self.global_rng)
