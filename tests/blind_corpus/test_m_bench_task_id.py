"""m_bench_task_id: the benchmark writes its CSV into the sandbox of one task id but runs the agent loop without
that task id (the loop makes its own), so the agent works in an empty folder: every answer is unreachable and the
benchmark measures guessing."""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .conftest import build, terminal


def analyst(body: dict) -> dict:
    """Reads sales.csv and answers the median question from it; answers 0 when there is no file."""
    messages = body["messages"]
    if messages[-1]["role"] != "tool":
        return terminal("cat sales.csv")
    output = json.loads(messages[-1]["content"]).get("output", "")
    rows = [r for r in csv.DictReader(io.StringIO(output.strip())) if r.get("units", "").isdigit()]
    value = float(statistics.median(int(r["units"]) for r in rows)) if rows else 0.0
    return {"content": f"Answer: {value}"}


async def accuracy(name: str, tmp_path: Path) -> float:
    with FakeOpenAIServer(policy=analyst) as server:
        env = build(name, server.base_url, data_dir_to_save_evals=str(tmp_path))
        await env.setup()
        env._tasks = [t for t in env._tasks if "median" in t["question"]][:2]
        await env.evaluate()
        server.assert_no_failures()
    lines = [json.loads(line) for line in next(tmp_path.rglob("*.jsonl")).read_text().splitlines()]
    return sum(s["score"] for s in lines) / len(lines)


async def test_m_bench_task_id(tmp_path: Path) -> None:
    assert await accuracy("csv_bench_env.py", tmp_path / "a") == 1.0
    assert await accuracy("m_bench_task_id.py", tmp_path / "b") == 0.0
