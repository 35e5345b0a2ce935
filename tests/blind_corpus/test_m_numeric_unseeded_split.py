"""m_numeric_unseeded_split: the train/eval split comes from the unseeded global ``random.shuffle``, so every
process start (each `serve`/`process`/`evaluate` run, each restart) draws another eval set, made partly of items
an earlier run trained on."""

from __future__ import annotations

import random

from .conftest import prepared


async def two_runs(name: str) -> tuple[set[str], set[str], set[str]]:
    state = random.getstate()
    try:
        random.seed(1)
        first = await prepared(name)
        random.seed(2)
        second = await prepared(name)
    finally:
        random.setstate(state)
    return (
        {i["id"] for i in first._eval_items},
        {i["id"] for i in second._eval_items},
        {i["id"] for i in first._items},
    )


async def test_m_numeric_unseeded_split() -> None:
    eval1, eval2, _ = await two_runs("numeric_tolerance_env.py")
    assert eval1 == eval2
    eval1, eval2, train1 = await two_runs("m_numeric_unseeded_split.py")
    assert eval1 != eval2
    assert eval2 & train1  # the second run evaluates on items the first run trained on
