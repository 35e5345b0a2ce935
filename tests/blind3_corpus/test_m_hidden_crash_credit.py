"""m_hidden_crash_credit: a solution that does not even import must pass no hidden test."""

from __future__ import annotations

from typing import Any

from blind3_helpers import answer, build, transcript

GOOD = "def solve(values):\n    return [values[i:i + {n}] for i in range(0, len(values), {n})]\n"
BROKEN = "def solve(values:\n    return values\n"  # a syntax error: the checker cannot import it


async def _score(name: str, ctx: Any, source: str) -> float:
    env = build(name)
    await env.setup()
    item = next(i for i in env._items + env._eval_items if i["id"] == "chunk-3")
    ctx.write_file("solution.py", source.replace("{n}", "3"))
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer("done")), ctx)


async def test_correct_env_passes_a_good_solution(ctx: Any) -> None:
    assert await _score("hidden_tests_env", ctx, GOOD) == 1.0


async def test_correct_env_gives_nothing_for_a_crash(ctx: Any) -> None:
    assert await _score("hidden_tests_env", ctx, BROKEN) == 0.0


async def test_mutant_gives_full_credit_for_a_crash(ctx: Any) -> None:
    assert await _score("m_hidden_crash_credit", ctx, BROKEN) == 1.0
