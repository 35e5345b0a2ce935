"""The shell commands of docs/testing-your-env.md: `process` and `evaluate` against the documented fake-server script."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer

from .test_snippets import ROOT, blocks

DOC = "docs/testing-your-env.md"
URL = "http://127.0.0.1:8765/v1"


def commands() -> list[str]:
    """Every command line of the guide's bash blocks, continuation lines joined, comments dropped."""
    out = []
    for body in blocks(DOC, "bash"):
        for command in body.replace("\\\n", " ").splitlines():
            command = command.split("  #")[0].strip()
            if command and not command.startswith("#"):
                out.append(re.sub(r"\s+", " ", command))
    return out


def find(word: str) -> str:
    (command,) = [c for c in commands() if f" {word} " in c and "file_task_env.py" in c]
    return command


def test_documented_commands_point_at_the_documented_fake_server() -> None:
    (serve_model,) = [c for c in commands() if "fake-server" in c and "--script" in c]
    assert f"--port {URL.rsplit(':', 1)[1].split('/')[0]}" in serve_model
    for mode in ("process", "evaluate", "serve"):
        assert f"--openai.base_url {URL}" in find(mode)
    assert "--env.data_dir_to_save_evals" in find("evaluate")
    assert "--env.max_num_workers_per_node 2" in find("serve") and "--slurm False" in find("serve")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["process", "evaluate"])
def test_documented_command_runs(mode: str, tmp_path: Path) -> None:
    """The guide's command, as written, against its fake-server script; also the file-task env's end-to-end test
    of both modes (tests/examples/test_file_task_env.py runs the env in-process, not through this command)."""
    from hermes_envs.testing.offline import offline_environ

    (serve_model,) = [c for c in commands() if "fake-server" in c and "--script" in c]
    script = shlex.split(serve_model)[shlex.split(serve_model).index("--script") + 1]
    with FakeOpenAIServer(script=ROOT / script, strict=True) as server:
        # `.venv/bin/` is where `make` installs; the venv running the tests stands in for it in any checkout.
        command = find(mode).replace(URL, server.base_url).replace(" out/", f" {tmp_path}/out/")
        command = command.replace(".venv/bin/", f"{Path(sys.executable).parent}/")
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=ROOT,
            env={**os.environ, **offline_environ()},
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        server.assert_no_failures()
        temperatures = set(server.temperatures())
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp_path / "out"
    if mode == "process":
        groups = [json.loads(x) for x in (out / "file_task.jsonl").read_text().splitlines()]
        assert len(groups) == 1 and len(groups[0]["scores"]) == 2 and (out / "file_task.html").exists()
        assert all(
            0.0 < s <= 1.0 for s in groups[0]["scores"]
        )  # the file exists and runs: at least partial credit
        assert any(m["role"] == "tool" for m in groups[0]["messages"][0])
    else:
        assert temperatures == {0.0}
        metrics = json.loads((out / "evals" / "metrics.json").read_text())["results"]["all"]
        assert 0.0 < metrics["eval/mean_score"] <= 1.0
        assert len((out / "evals" / "samples.jsonl").read_text().splitlines()) == 12  # the whole eval set
