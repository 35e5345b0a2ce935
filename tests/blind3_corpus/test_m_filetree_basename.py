"""m_filetree_basename: files must be credited at the requested path; a flat dump of the right names is wrong."""

from __future__ import annotations

from typing import Any

from blind3_helpers import answer, build, transcript


async def _score(name: str, ctx: Any, flat: bool) -> float:
    env = build(name)
    await env.setup()
    item = next(i for i in env._items if len(i["files"]) == 4)
    for entry in item["files"]:
        path = entry["path"].rsplit("/", 1)[-1] if flat else entry["path"]
        ctx.write_file(path, "\n".join(entry["contains"]) + "\n")
    return await env.compute_reward(item, transcript(env.format_prompt(item), answer("done")), ctx)


async def test_correct_env_credits_the_layout(ctx: Any) -> None:
    assert await _score("filetree_env", ctx, flat=False) == 1.0


async def test_correct_env_does_not_credit_misplaced_files(ctx: Any) -> None:
    assert await _score("filetree_env", ctx, flat=True) < 0.5


async def test_mutant_credits_misplaced_files(ctx: Any) -> None:
    assert await _score("m_filetree_basename", ctx, flat=True) == 1.0
