"""m_invoice_eval_strict: evaluation grades with its own, stricter rule (the bare reply must parse as JSON and equal
the reference) instead of the training reward, so answers training pays 1.0 for (a fenced JSON block) score 0 in
eval: eval measures something training never asked for."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, load

BY_INVOICE = {i["invoice"]: i["expected"] for i in load("invoice_json_env.py")._make_items()}


def accountant(body: dict) -> dict:
    """Gives the right figures, in a ```json fence after a short sentence (as the prompt allows)."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    expected = next(v for k, v in BY_INVOICE.items() if k in prompt)
    return {"content": "Here are the figures:\n```json\n" + json.dumps(expected) + "\n```"}


async def train_and_eval(name: str, tmp_path: Path) -> tuple[list[float], float]:
    with FakeOpenAIServer(policy=accountant) as server:
        env = build(name, server.base_url, data_dir_to_save_evals=str(tmp_path))
        await env.setup()
        group, _ = await env.collect_trajectories(env._items[0])
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        server.assert_no_failures()
    return group["scores"], dict(env._eval_metrics)["eval/exact_rate"]


async def test_m_invoice_eval_strict(tmp_path: Path) -> None:
    assert await train_and_eval("invoice_json_env.py", tmp_path / "a") == ([1.0, 1.0], 1.0)
    assert await train_and_eval("m_invoice_eval_strict.py", tmp_path / "b") == ([1.0, 1.0], 0.0)
