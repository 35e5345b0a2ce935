"""m_hidden_tests_eval_examples: evaluate grades each eval function on the two examples the prompt shows, training on the
hidden cases; a model that hard-codes the examples reads as solving every eval function."""

from __future__ import annotations

from typing import Any

import pytest
from blind5_helpers import ready

from hermes_envs.testing.fake_server import FakeOpenAIServer


def hard_code_examples(env: Any) -> Any:
    """A fake-model policy that saves a solution answering only the prompt's examples, for every eval item."""
    by_prompt = {env.format_prompt(i): i for i in env.eval_items}

    def policy(body: dict) -> dict:
        prompt = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        if any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": "Saved."}
        item = by_prompt[prompt]
        table = {repr(ex["args"]): ex["expected"] for ex in item["examples"]}
        code = f"def {item['fn']}(*args):\n    return {table!r}.get(repr(list(args)))\n"
        return {"tool_calls": [{"name": "write_file", "arguments": {"path": "solution.py", "content": code}}]}

    return policy


@pytest.mark.parametrize(
    ("name", "inflated"), [("hidden_tests_env", False), ("m_hidden_tests_eval_examples", True)]
)
async def test_eval_grades_as_training_does(name: str, inflated: bool) -> None:
    env0 = await ready(name)
    with FakeOpenAIServer(policy=hard_code_examples(env0)) as srv:
        env = await ready(name, srv.base_url)
        logged: list[dict] = []

        async def capture(metrics: dict, **kwargs: Any) -> None:
            logged.append(metrics)

        env.evaluate_log = capture
        await env.evaluate()
        srv.assert_no_failures()
    assert logged[0]["eval/pass_rate"] == (1.0 if inflated else 0.0)
