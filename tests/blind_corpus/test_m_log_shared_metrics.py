"""m_log_shared_metrics: the pending eval metrics live in a class-level list shared by every instance, so one env's
evaluation results are reported by another env instance in the same process (its wandb_log picks them up)."""

from __future__ import annotations

import re

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, write_file


def good_agent(body: dict) -> dict:
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"content": "Report saved."}
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    failing = sorted(
        {ip for ip, status in re.findall(r"^(\S+) .* (\d{3})$", prompt, re.M) if status.startswith("5")}
    )
    return write_file("report.txt", "".join(f"{ip}\n" for ip in failing))


async def metrics_seen_by_the_other_env(name: str) -> list:
    with FakeOpenAIServer(policy=good_agent) as server:
        evaluating, other = build(name, server.base_url), build(name, server.base_url)
        await evaluating.setup()
        await other.setup()
        evaluating._eval_items = evaluating._eval_items[:1]
        await evaluating.evaluate()
        server.assert_no_failures()
        assert evaluating._eval_metrics == [("eval/accuracy", 1.0)]
        return list(other._eval_metrics)


async def test_m_log_shared_metrics() -> None:
    assert await metrics_seen_by_the_other_env("log_report_env.py") == []
    assert await metrics_seen_by_the_other_env("m_log_shared_metrics.py") == [("eval/accuracy", 1.0)]
