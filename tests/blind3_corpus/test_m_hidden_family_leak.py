"""m_hidden_family_leak: eval must hold out whole task families; variants of one family must not straddle the split."""

from __future__ import annotations

from blind3_helpers import build


async def _shared_families(name: str) -> set[str]:
    env = build(name)
    await env.setup()
    assert env._eval_items and env._items
    return {i["family"] for i in env._eval_items} & {i["family"] for i in env._items}


async def test_correct_env_holds_out_whole_families() -> None:
    assert await _shared_families("hidden_tests_env") == set()


async def test_mutant_trains_on_variants_of_eval_tasks() -> None:
    assert await _shared_families("m_hidden_family_leak") != set()
