"""m_raw_eval_max_tokens: eval must sample with the same token budget as training, or it measures another policy."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer

CODE = "```python\ndef f():\n    return 1\n```"


async def _budgets(name: str) -> tuple[set[int], set[int]]:
    with FakeOpenAIServer(script=[{"content": CODE}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        await env.collect_trajectories(env._items[0])
        train = {c.body.get("max_tokens") for c in srv.chat_calls}
        srv.reset()
        await env.evaluate()
        evals = {c.body.get("max_tokens") for c in srv.chat_calls}
        srv.assert_no_failures()
    return train, evals


async def test_correct_env_uses_one_budget() -> None:
    train, evals = await _budgets("raw_snippet_exec_env")
    assert train == evals == {1024}


async def test_mutant_evaluates_with_a_quarter_of_the_budget() -> None:
    train, evals = await _budgets("m_raw_eval_max_tokens")
    assert train == {1024} and evals == {256}
