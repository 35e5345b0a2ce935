"""m_hidden_missing_await: the hidden checker must really be written before it runs; a correct solution passes."""

from __future__ import annotations

from typing import Any

import pytest
from blind3_helpers import answer, build, transcript

GOOD = "def solve(values):\n    return [values[i:i + 3] for i in range(0, len(values), 3)]\n"


async def _score(name: str, ctx: Any) -> float:
    env = build(name)
    await env.setup()
    item = next(i for i in env._items + env._eval_items if i["id"] == "chunk-3")
    ctx.write_file("solution.py", GOOD)
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer("done")), ctx)


async def test_correct_env_credits_a_correct_solution(ctx: Any) -> None:
    assert await _score("hidden_tests_env", ctx) == 1.0


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
async def test_mutant_scores_a_correct_solution_zero(ctx: Any) -> None:
    assert await _score("m_hidden_missing_await", ctx) == 0.0
