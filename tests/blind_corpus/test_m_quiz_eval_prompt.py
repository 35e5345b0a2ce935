"""m_quiz_eval_prompt: evaluation sends the bare question (no system prompt, no answer-format instruction) while
training sends both, so a model that follows the trained format scores 0 in eval."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, load

TABLE = load("element_quiz_env.py")._ELEMENTS


def format_following_agent(body: dict) -> dict:
    """Knows every element; uses <answer> tags only when the conversation asks for them."""
    text = " ".join(m["content"] for m in body["messages"] if m["role"] in ("system", "user"))
    symbol = re.search(r"symbol (\w+)\?", text)
    number = re.search(r"atomic number (\d+)\?", text)
    name = next(
        n for z, s, n in TABLE if (symbol and s == symbol.group(1)) or (number and str(z) == number.group(1))
    )
    return {"content": f"<answer>{name}</answer>" if "<answer>" in text else f"It is {name}."}


async def eval_and_train(name: str) -> tuple[float, list[float], bool]:
    with FakeOpenAIServer(policy=format_following_agent) as server:
        env = build(name, server.base_url)
        await env.setup()
        item = env._eval_items[0]
        env._eval_items = [item]
        await env.evaluate()
        group, _ = await env.collect_trajectories(item)
        eval_request, train_request = (
            server.chat_calls[0].body["messages"],
            server.chat_calls[1].body["messages"],
        )
        server.assert_no_failures()
    return dict(env._eval_metrics)["eval/accuracy"], group["scores"], eval_request == train_request


async def test_m_quiz_eval_prompt() -> None:
    assert await eval_and_train("element_quiz_env.py") == (1.0, [1.0, 1.0], True)
    assert await eval_and_train("m_quiz_eval_prompt.py") == (0.0, [1.0, 1.0], False)
