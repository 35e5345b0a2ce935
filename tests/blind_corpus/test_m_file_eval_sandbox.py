"""m_file_eval_sandbox: evaluation reads the report from a sandbox the agent never worked in, so a perfect agent
scores 0 in eval while training (same reward, right sandbox) credits it."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, write_file


def good_agent(body: dict) -> dict:
    """Writes the right report for whatever log the prompt shows, then says so."""
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"content": "Report saved."}
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    failing = sorted(
        {ip for ip, status in re.findall(r"^(\S+) .* (\d{3})$", prompt, re.M) if status.startswith("5")}
    )
    return write_file("report.txt", "".join(f"{ip}\n" for ip in failing))


async def eval_accuracy(name: str) -> float:
    with FakeOpenAIServer(policy=good_agent) as server:
        env = build(name, server.base_url)
        await env.setup()
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        server.assert_no_failures()
        return dict(env._eval_metrics)["eval/accuracy"]


async def test_m_file_eval_sandbox() -> None:
    assert await eval_accuracy("log_report_env.py") == 1.0
    assert await eval_accuracy("m_file_eval_sandbox.py") == 0.0
