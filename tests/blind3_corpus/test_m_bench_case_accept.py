"""m_bench_case_accept: every answer the benchmark lists as accepted must score 1.0 when the model gives it."""

from __future__ import annotations

from blind3_helpers import answer, build, transcript


async def _unreachable(name: str) -> list[str]:
    env = build(name)
    await env.setup()
    missed = []
    for item in env._eval_items:
        for accepted in item["accept"]:
            result = transcript(env.format_prompt(item), answer(f"FINAL: {accepted}"))
            if await env.compute_reward(item, result, None) != 1.0:
                missed.append(f"{item['id']}:{accepted}")
    return missed


async def test_correct_env_accepts_every_listed_answer() -> None:
    assert await _unreachable("short_answer_bench_env") == []


async def test_mutant_lists_answers_no_reply_can_match() -> None:
    assert "q11:Na" in await _unreachable("m_bench_case_accept")
