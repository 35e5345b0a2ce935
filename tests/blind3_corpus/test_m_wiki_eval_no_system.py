"""m_wiki_eval_no_system: eval rollouts must get the same system prompt (answer and citation format) as training."""

from __future__ import annotations

from blind3_helpers import build, load

from hermes_envs.testing.fake_server import FakeOpenAIServer


async def _first_messages(name: str) -> tuple[list[dict], list[dict]]:
    """(first message of each training request, first message of each eval request)."""
    with FakeOpenAIServer(script=[{"content": "Answer: Albatross [doc:travel]"}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        await env.collect_trajectories(env._items[0])
        train = [c.body["messages"][0] for c in srv.chat_calls]
        srv.reset()
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        evals = [c.body["messages"][0] for c in srv.chat_calls]
        srv.assert_no_failures()
    return train, evals


async def test_correct_env_evaluates_under_the_training_prompt() -> None:
    train, evals = await _first_messages("wiki_retrieval_env")
    system = {"role": "system", "content": load("wiki_retrieval_env").SYSTEM_PROMPT}
    assert train and evals
    assert all(m == system for m in train + evals)


async def test_mutant_evaluates_without_the_system_prompt() -> None:
    train, evals = await _first_messages("m_wiki_eval_no_system")
    assert all(m["role"] == "system" for m in train)
    assert evals and all(m["role"] == "user" for m in evals)
