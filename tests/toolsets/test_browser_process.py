"""A ``browser`` env runs one atroposlib ``process`` step against the fake model server and the offline browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_envs.testing._process_run import run_process
from hermes_envs.testing.fake_server import FakeOpenAIServer

ENV = Path(__file__).with_name("browser_task_env.py")
SCRIPT = [
    {
        "tool_calls": [
            {"name": "browser_navigate", "arguments": {"url": "https://ferry.porthalden.invalid/timetable"}}
        ]
    },
    {"tool_calls": [{"name": "browser_type", "arguments": {"ref": "@e3", "text": "Tern Island"}}]},
    {"tool_calls": [{"name": "browser_press", "arguments": {"key": "Enter"}}]},
    {"tool_calls": [{"name": "browser_snapshot", "arguments": {"full": True}}]},
    {"content": "The first sailing leaves at 08:15."},
]


@pytest.mark.slow  # a `process` subprocess: about 10 s
def test_a_browser_env_runs_one_process_step_offline(tmp_path: Path) -> None:
    with FakeOpenAIServer(script=SCRIPT, strict=True) as server:
        done = run_process(ENV, tmp_path, server.base_url, timeout=240, cwd=ENV.parent)
        server.assert_no_failures()
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [
        json.loads(line) for line in (tmp_path / "browser_task_env.jsonl").read_text().splitlines() if line
    ]
    assert len(rows) == 1 and rows[0]["scores"] == [1.0, 1.0]
    tool_messages = [m["content"] for m in rows[0]["messages"][0] if m["role"] == "tool"]
    assert '"title": "Port Halden Ferry - Timetable"' in tool_messages[0]
    assert "08:15 Port Halden to Tern Island" in tool_messages[-1]
