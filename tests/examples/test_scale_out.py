"""Scale-out is atroposlib's own: run-api + an example env in ``serve`` mode with two workers, the test as trainer.

The test plays the trainer against atroposlib's trajectory API (``/register``, then ``/batch``), starts
``environments/file_task_env.py serve`` against the fake model server with two env workers, and checks that scored
groups arrive in batches of ``batch_size`` sequences. Everything it starts is stopped, in bounded time.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.offline import offline_environ, offline_tokenizer_path

from .conftest import ENVIRONMENTS, ROOT, example

pytestmark = pytest.mark.slow

GROUP_SIZE = 2
BATCH_SIZE = 4  # sequences per batch: two groups
STEPS = 2
DEADLINE = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_api_command(port: int) -> list[str]:
    """atroposlib's ``run-api`` console script (or its module when the script is not on PATH)."""
    script = Path(sys.executable).with_name("run-api")
    exe = (
        [str(script)]
        if script.exists()
        else (
            [shutil.which("run-api")]
            if shutil.which("run-api")
            else [sys.executable, "-m", "atroposlib.cli.run_api"]
        )
    )
    return [*exe, "--host", "127.0.0.1", "--port", str(port)]


def mixed_policy() -> Any:
    """Fix the script in every other rollout and leave it unchanged in the others, so group scores differ
    (``serve`` keeps ``ensure_scores_are_not_same`` on and drops groups whose scores are all equal)."""
    items = example("file_task_env")._make_items()
    lock = threading.Lock()
    count = [0]

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        prompt = next((m["content"] for m in messages if m.get("role") == "user"), "")
        item = next((i for i in items if i["buggy"] in prompt), None)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if item is None:
            return {"content": "I could not find the script."}
        if turn == 0:
            with lock:
                count[0] += 1
                content = item["solution"] if count[0] % 2 else item["buggy"]
            return {
                "tool_calls": [{"name": "write_file", "arguments": {"path": "task.py", "content": content}}]
            }
        if turn == 1:
            return {"tool_calls": [{"name": "terminal", "arguments": {"command": "python3 task.py"}}]}
        return {"content": "Done."}

    return respond


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL after 10 s."""
    if proc.poll() is not None:
        return
    with_group = hasattr(os, "killpg")
    try:
        os.killpg(proc.pid, signal.SIGTERM) if with_group else proc.terminate()
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL) if with_group else proc.kill()
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def test_serve_with_two_workers_feeds_trainer_batches(tmp_path: Path) -> None:
    port = free_port()
    api_url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **offline_environ()}
    started: list[subprocess.Popen[bytes]] = []

    def spawn(cmd: list[str], log: str) -> subprocess.Popen[bytes]:
        out = open(tmp_path / log, "wb")
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True
        )
        out.close()
        started.append(proc)
        return proc

    def logs() -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in tmp_path.glob("*.log")
        )

    try:
        api = spawn(run_api_command(port), "run-api.log")
        client = httpx.Client(base_url=api_url, timeout=10)
        deadline = time.monotonic() + 30
        while True:
            assert api.poll() is None, f"run-api exited early:\n{logs()}"
            try:
                client.get("/")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"run-api did not come up:\n{logs()}"
                time.sleep(0.2)

        # the trainer: register, then one /batch (the API only accepts envs after that)
        client.post(
            "/register",
            json={
                "wandb_group": "hermes-envs-test",
                "wandb_project": "hermes-envs-test",
                "batch_size": BATCH_SIZE,
                "max_token_len": 4096,
                "checkpoint_dir": str(tmp_path / "ckpt"),
                "save_checkpoint_interval": -1,
                "starting_step": 0,
                "num_steps": STEPS,
            },
        ).raise_for_status()
        assert client.get("/batch").json()["batch"] is None

        with FakeOpenAIServer(policy=mixed_policy(), strict=True) as model:
            spawn(
                [
                    sys.executable,
                    str(ENVIRONMENTS / "file_task_env.py"),
                    "serve",
                    "--env.rollout_server_url",
                    api_url,
                    "--env.group_size",
                    str(GROUP_SIZE),
                    "--env.max_num_workers_per_node",
                    "2",  # two env workers (x one server)
                    "--env.total_steps",
                    str(STEPS),
                    "--env.use_wandb",
                    "False",
                    "--env.tokenizer_name",
                    offline_tokenizer_path(),
                    "--openai.base_url",
                    model.base_url,
                    "--openai.model_name",
                    "fake",
                    "--openai.api_key",
                    "x",
                    "--openai.health_check",
                    "False",
                    "--slurm",
                    "False",
                ],
                "serve.log",
            )
            batches: list[list[dict[str, Any]]] = []
            deadline = time.monotonic() + DEADLINE
            while len(batches) < STEPS:
                assert all(p.poll() is None for p in started), f"a process exited early:\n{logs()}"
                assert time.monotonic() < deadline, f"no {STEPS} batches after {DEADLINE} s:\n{logs()}"
                batch = client.get("/batch").json()["batch"]
                if batch:
                    batches.append(batch)
                else:
                    time.sleep(0.5)
            model.assert_no_failures()
            envs_seen = client.get("/status").json()

        for batch in batches:
            assert sum(len(group["tokens"]) for group in batch) == BATCH_SIZE
            for group in batch:
                assert len(group["tokens"]) == len(group["masks"]) == len(group["scores"]) == GROUP_SIZE
                assert all(len(t) == len(m) > 0 for t, m in zip(group["tokens"], group["masks"]))
                assert len(set(group["scores"])) > 1 and all(0.0 <= s <= 1.0 for s in group["scores"])
        assert envs_seen["current_step"] >= STEPS
    finally:
        for proc in reversed(started):
            stop(proc)
    assert all(p.poll() is not None for p in started)
