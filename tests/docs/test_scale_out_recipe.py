"""testing-your-env §10, run as written: fake model + run-api + `serve` with curl as the trainer, offline.

The block's ports are swapped for free ones and it runs in a scratch project folder (``.venv`` linked to the venv
running the tests). The Hub is pointed at a dead local port, so a tokenizer download would fail loudly.
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .test_snippets import ROOT, blocks

DOC = "docs/testing-your-env.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recipe() -> str:
    (block,) = [b for b in blocks(DOC, "bash") if "run-api" in b and " serve " in b]
    return block


def test_recipe_gives_serve_the_offline_tokenizer_and_varied_scores() -> None:
    block = recipe()
    serve = block[block.index("environments/file_task_env.py serve") :].split("&\n")[0]
    assert '--env.tokenizer_name "$(.venv/bin/hermes-envs tokenizer-path)"' in serve
    assert "--policy file_task_mixed" in block
    for field in ("batch_size", "max_token_len", "checkpoint_dir", "num_steps", "starting_step"):
        assert f'"{field}"' in block  # the trainer's /register payload is shown


@pytest.mark.slow  # three processes and two batches (about 20 s)
def test_scale_out_recipe_runs_as_written(tmp_path: Path) -> None:
    from hermes_envs.testing.offline import offline_environ

    (tmp_path / ".venv").symlink_to(sys.prefix)
    (tmp_path / "environments").mkdir()
    shutil.copy(ROOT / "environments" / "file_task_env.py", tmp_path / "environments")
    model, api, dead = free_port(), free_port(), free_port()
    block = recipe().replace("8765", str(model)).replace("8000", str(api))
    env = {
        **os.environ,
        **offline_environ(),
        "PYTHONPATH": str(ROOT),
        "HF_ENDPOINT": f"http://127.0.0.1:{dead}",
    }
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        env.pop(key, None)  # the tokenizer must come from the flag, not from offline mode
    script = "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + block
    try:
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        logs = {p.name: p.read_text(errors="replace")[-2000:] for p in (tmp_path / "out").glob("*.log")}
        raise AssertionError(f"the recipe did not finish: {logs}") from exc
    logs = "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in (tmp_path / "out").glob("*.log")
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:] + logs
    lines = done.stdout.strip().splitlines()
    assert (
        lines[0].startswith('{"uuid":') and lines[1].replace(" ", "") == '{"batch":null}'
    )  # register, /batch
    groups = ast.literal_eval(lines[-1])
    assert len(groups) == 2 and all(len(g) == 2 and len(set(g)) > 1 for g in groups), lines[-1]
    serve_log = (tmp_path / "out" / "serve.log").read_text(errors="replace")
    assert str(dead) not in serve_log and "huggingface.co" not in serve_log
    assert "0 unmatched" in (tmp_path / "out" / "fake-server.log").read_text()
