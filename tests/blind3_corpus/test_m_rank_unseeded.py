"""m_rank_unseeded: the built-in data must be the same in every process, or eval sets and item ids drift apart."""

from __future__ import annotations

import random

from blind3_helpers import load


def _two_builds_differ(name: str) -> bool:
    """Build the items twice, as two processes would (the global random generator in different states)."""
    module = load(name)
    saved = random.getstate()
    try:
        random.seed(1)
        first = module._make_items()
        random.seed(2)
        second = module._make_items()
    finally:
        random.setstate(saved)
    return first != second


def test_correct_env_builds_the_same_items_every_time() -> None:
    assert not _two_builds_differ("ranking_env")


def test_mutant_builds_different_tables_in_each_process() -> None:
    assert _two_builds_differ("m_rank_unseeded")
