"""m_quiz_global_seed: setup seeds the process-wide ``random`` module to shuffle its data, so every other user of
``random`` in the trainer process (other envs, samplers, jitter) restarts the same sequence whenever an env is set
up: what the process draws next no longer depends on anything before."""

from __future__ import annotations

import random

from .conftest import prepared


async def next_draw_after_setup(name: str, prior_seed: int) -> float:
    random.seed(prior_seed)
    await prepared(name)
    return random.random()


async def test_m_quiz_global_seed() -> None:
    state = random.getstate()
    try:
        correct = [await next_draw_after_setup("element_quiz_env.py", s) for s in (111, 222)]
        mutant = [await next_draw_after_setup("m_quiz_global_seed.py", s) for s in (111, 222)]
    finally:
        random.setstate(state)
    assert correct[0] != correct[1]  # the process's own random stream is left alone
    assert mutant[0] == mutant[1]  # reset by the env's setup, whatever came before
