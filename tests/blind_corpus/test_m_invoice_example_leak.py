"""m_invoice_example_leak: the "shape" example in the prompt is built from the item's own expected answer, so
copying the example from the prompt earns full credit without any arithmetic."""

from __future__ import annotations

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build


def copier(body: dict) -> dict:
    """Answers with the last line of the prompt (the JSON example), verbatim."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return {"content": prompt.strip().splitlines()[-1]}


async def copy_score(name: str) -> list[float]:
    with FakeOpenAIServer(policy=copier) as server:
        env = build(name, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(env._items[0])
        server.assert_no_failures()
    return group["scores"]


async def test_m_invoice_example_leak() -> None:
    assert await copy_score("invoice_json_env.py") == [0.0, 0.0]  # the example holds placeholders only
    assert await copy_score("m_invoice_example_leak.py") == [1.0, 1.0]
