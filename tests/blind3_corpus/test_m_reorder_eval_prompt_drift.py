"""m_reorder_eval_prompt_drift: eval must ask the question training asks (format_prompt), not a rewritten one."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer


async def _eval_vs_train_prompts(name: str) -> list[tuple[str, str]]:
    """(user message eval sent, format_prompt of that item) for two eval items."""
    with FakeOpenAIServer(script=[{"content": "SKUS: none"}]) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        srv.assert_no_failures()
        sent = [next(m["content"] for m in c.body["messages"] if m["role"] == "user") for c in srv.chat_calls]
    return list(zip(sent, [env.format_prompt(i) for i in env._eval_items]))


async def test_correct_env_evaluates_with_the_training_prompt() -> None:
    pairs = await _eval_vs_train_prompts("reorder_set_env")
    assert len(pairs) == 2 and all(sent == trained for sent, trained in pairs)


async def test_mutant_evaluates_a_reworded_question_without_the_strict_rule() -> None:
    pairs = await _eval_vs_train_prompts("m_reorder_eval_prompt_drift")
    assert all(sent != trained for sent, trained in pairs)
    assert all("strictly below" in trained and "strictly below" not in sent for sent, trained in pairs)
