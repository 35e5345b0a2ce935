"""What ``setup()`` and ``get_next_item`` show: how long setup took and what it logged, and one scan of the
training items up to the end of the cycle (or a cap)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._observations.logs import captured_log
from hermes_envs.conformance._session import EnvSession

#: How many get_next_item calls we make at most while looking for the end of the training cycle.
MAX_ITEMS_SCANNED = 2000
#: Calls made after the same item came back twice in a row, before calling get_next_item stuck (HC203).
STUCK_CALLS = 8


def _item_key(item: Any) -> str:
    try:
        return json.dumps(item, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(item)


@dataclass(frozen=True)
class SetupRun:
    """``setup()`` run once, offline: the seconds it took and the WARNING-and-above records it logged (a check that
    finds no data can then name what setup() said, HC202). Building it raises what setup raised."""

    seconds: float
    log: tuple[str, ...]

    @classmethod
    def build(cls, s: EnvSession) -> SetupRun:
        try:
            s.env()  # built before the clock starts: constructing the env (its tokenizer, say) is not setup()'s time
            start = time.perf_counter()
            with captured_log() as log:
                s.run_env(lambda env: env.setup(), timeout=s.settings.setup_timeout, phase="setup")
        except (asyncio.TimeoutError, TimeoutError):
            s.setup_error = TimeoutError(
                f"setup() did not finish within {s.settings.setup_timeout:g} s (setup_timeout)"
            )
            raise s.setup_error from None
        except Exception as exc:
            s.setup_error = exc
            raise
        return cls(seconds=time.perf_counter() - start, log=tuple(log))


@dataclass(frozen=True)
class TrainingScan:
    """``get_next_item`` called until the first item comes back (a full cycle), ``None``, a raise or a cap.

    ``stuck``: the same item came back on every call (HC203); ``calls``: the get_next_item calls it took."""

    items: tuple[Any, ...]
    cycled: bool
    stuck: bool
    error: str | None
    calls: int

    @classmethod
    def build(cls, s: EnvSession) -> TrainingScan:
        try:
            s.observe(SetupRun)
        except Exception:
            found = s.stand_ins()
            if found is None:
                raise
            # setup() failed (HC201 reports it): the stand-in items serve instead of get_next_item's.
            return cls(items=tuple(found.items), cycled=True, stuck=False, error=None, calls=0)
        items: list[Any] = []
        keys: list[str] = []
        error = None
        cycled = False
        stuck = False
        stuck_checked: list[bool] = []

        async def scan(env: Any) -> None:
            nonlocal error, cycled, stuck
            for _ in range(MAX_ITEMS_SCANNED):
                try:
                    item = await env.get_next_item()
                except Exception as exc:
                    error = f"{type(exc).__name__}: {exc}"
                    return
                if item is None:
                    return
                key = _item_key(item)
                if keys and key == keys[0]:
                    if len(keys) == 1 and not stuck_checked:
                        # The same item twice in a row: a one-item dataset, or a get_next_item that never
                        # advances. A few more calls tell them apart (a random sampler moves on).
                        stuck_checked.append(True)
                        for _ in range(STUCK_CALLS):
                            try:
                                again = await env.get_next_item()
                            except Exception as exc:
                                error = f"{type(exc).__name__}: {exc}"
                                return
                            if _item_key(again) != key:
                                items.append(again)
                                keys.append(_item_key(again))
                                break
                        else:
                            stuck = True
                            cycled = True
                            return
                        continue
                    cycled = True
                    return
                items.append(item)
                keys.append(key)

        s.run_env(scan, phase="items")
        return cls(items=tuple(items), cycled=cycled, stuck=stuck, error=error, calls=len(items) + cycled)
