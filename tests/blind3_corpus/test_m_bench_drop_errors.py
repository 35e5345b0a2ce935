"""m_bench_drop_errors: a benchmark item lost to a server error must still count (as wrong) in the accuracy."""

from __future__ import annotations

from blind3_helpers import build

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import disable_client_retries, fast_retries

SCRIPT = {
    "scripts": {
        "^Name one noble gas": {"turns": [{"content": "FINAL: neon"}]},
        "^Give a prime number": {"turns": [{"content": "FINAL: 23", "fault": {"kind": "500", "times": 100}}]},
    }
}


async def _eval_metrics(name: str) -> dict[str, float]:
    with FakeOpenAIServer(script=SCRIPT) as srv, fast_retries(attempts=1):
        env = build(name, srv.base_url)
        disable_client_retries(env.server)
        await env.setup()
        env._eval_items = [i for i in env._eval_items if i["id"] in ("q01", "q02")]
        await env.evaluate()
    return dict(env._eval_metrics)


async def test_correct_env_counts_the_failed_item() -> None:
    metrics = await _eval_metrics("short_answer_bench_env")
    assert metrics["eval/accuracy"] == 0.5
    assert metrics["eval/unanswered"] == 1.0


async def test_mutant_drops_the_failed_item_from_the_benchmark() -> None:
    metrics = await _eval_metrics("m_bench_drop_errors")
    assert metrics["eval/accuracy"] == 1.0
