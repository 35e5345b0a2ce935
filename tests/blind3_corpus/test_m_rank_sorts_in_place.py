"""m_rank_sorts_in_place: scoring must not reorder the item's rows (later prompts would show the answer)."""

from __future__ import annotations

import copy

from blind3_helpers import answer, build, transcript


async def _prompts(name: str) -> tuple[str, str, str]:
    env = build(name)
    await env.setup()
    item = copy.deepcopy(env._items[1])
    before = env.format_prompt(item)
    await env.compute_reward(item, transcript(before, answer("ORDER: a > b")), None)
    sign = -1 if item["descending"] else 1
    sorted_names = [r["name"] for r in sorted(item["rows"], key=lambda r: sign * r[item["key"]])]
    return before, env.format_prompt(item), " ".join(sorted_names)


def _row_names(prompt: str) -> str:
    rows = [line for line in prompt.splitlines() if line.count(" | ") == 3 and not line.startswith("name |")]
    return " ".join(line.split(" | ")[0] for line in rows)


async def test_correct_env_leaves_item_unchanged() -> None:
    before, after, _ = await _prompts("ranking_env")
    assert before == after


async def test_mutant_sorts_the_item_so_the_next_prompt_shows_the_answer() -> None:
    before, after, sorted_names = await _prompts("m_rank_sorts_in_place")
    assert before != after
    assert _row_names(after) == sorted_names
