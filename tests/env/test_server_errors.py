"""Rollouts that failed on the model server (down, 5xx) are dropped with one warning, never scored 0.0."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs.env import HermesAgentEnvConfig
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.offline import offline_environ, offline_tokenizer_path
from hermes_envs.testing.retries import disable_client_retries, fast_retries
from hermes_envs.tools import active_sandboxes

from .test_base import FileEnv, build

ROOT = Path(__file__).resolve().parents[2]


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def dead_env(port: int, cls: type[FileEnv] = FileEnv, **config: Any) -> FileEnv:
    cfg = HermesAgentEnvConfig(
        tokenizer_name=offline_tokenizer_path(),
        use_wandb=False,
        group_size=2,
        enabled_toolsets=["terminal"],
        **config,
    )
    servers = [
        APIServerConfig(
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key="x",
            model_name="fake",
            server_type="openai",
            health_check=False,
        )
    ]
    env = cls(cfg, servers, slurm=False, testing=False)
    disable_client_retries(env.server)
    return env


def drop_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "was dropped" in r.getMessage()]


async def test_a_group_against_a_dead_server_is_dropped_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = dead_port()
    env = dead_env(port)
    await env.setup()
    rewards_before = len(FileEnv.seen_ctx)
    boxes_before = set(active_sandboxes())  # another test in this worker may have left its own
    with fast_retries(), caplog.at_level(logging.WARNING):
        group, backlog = await env.collect_trajectories(await env.get_next_item())
    assert group is None and backlog == []
    assert len(FileEnv.seen_ctx) == rewards_before  # no reward was asked to score a rollout that never ran
    (warning,) = drop_warnings(caplog)
    assert f"http://127.0.0.1:{port}/v1" in warning
    assert "2 of 2 rollouts" in warning and "could not be reached" in warning
    assert "Fix: start the model server, or check --openai.base_url" in warning
    assert env.server_error_groups == 1
    assert set(active_sandboxes()) <= boxes_before  # the dropped rollouts' sandboxes were cleaned up


async def test_a_group_where_one_rollout_hit_a_5xx_is_dropped_whole(caplog: pytest.LogCaptureFixture) -> None:
    # One rollout's first call gets HTTP 500 (after atroposlib's retries), the other answers: the group is
    # dropped whole, since atroposlib only takes full groups and a 0.0 in its place would read as a bad answer.
    with FakeOpenAIServer(policy="answer:text=Answer: 42", faults=["500:times=1"], strict=False) as srv:
        url = srv.base_url
        env = build(FileEnv, srv)
        disable_client_retries(env.server)
        await env.setup()
        with fast_retries(), caplog.at_level(logging.WARNING):
            group, _ = await env.collect_trajectories(await env.get_next_item())
        assert sorted(c.status for c in srv.chat_calls) == [200, 500]
    assert group is None
    (warning,) = drop_warnings(caplog)
    assert "1 of 2 rollouts" in warning and "5xx" in warning and url in warning
    assert "Fix: check the model server's log" in warning


def test_process_run_against_a_dead_server_writes_no_group_and_says_why(tmp_path: Path) -> None:
    # The real CLI: exit 1 with our one message, no traceback; before the framework checked the address first,
    # atroposlib retried every request with back-off (about 20 s) and printed "Failed to process group,
    # retrying..." ahead of it.
    port = dead_port()
    out = tmp_path / "groups.jsonl"
    cmd = [
        sys.executable,
        str(ROOT / "environments" / "arithmetic_env.py"),
        "process",
        "--env.use_wandb", "False",
        "--env.tokenizer_name", offline_tokenizer_path(),
        "--env.total_steps", "1",
        "--env.group_size", "2",
        "--env.data_path_to_save_groups", str(out),
        "--openai.base_url", f"http://127.0.0.1:{port}/v1",
        "--openai.model_name", "fake",
        "--openai.api_key", "x",
        "--openai.health_check", "False",
    ]  # fmt: skip
    env = {**os.environ, **offline_environ()}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT, check=False)
    assert run.returncode == 1, run.stderr[-2000:]
    groups = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    assert groups == []  # before the fix: one group with scores [0.0, 0.0]
    assert "Traceback" not in run.stderr
    assert run.stderr.count(f"the model server at http://127.0.0.1:{port}/v1 should answer") == 1
    assert "Fix: start the model server, or check --openai.base_url" in run.stderr
    assert "retrying" not in run.stderr
    assert "model call failed" not in run.stderr  # no rollout was tried against the dead address


def process_env(env: FileEnv, groups: int) -> FileEnv:
    """``env`` (built with ``data_path_to_save_groups``) set up as atroposlib's ``process`` command sets it up."""
    env.process_mode = True
    env.n_groups_to_process = groups
    env.group_size_to_process = env.config.group_size
    return env


async def test_process_against_a_dead_address_stops_before_any_rollout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port = dead_port()
    before = set(active_sandboxes())  # (other tests in this worker may hold theirs)
    env = process_env(dead_env(port, data_path_to_save_groups=str(tmp_path / "groups.jsonl")), groups=2)
    with caplog.at_level(logging.INFO), pytest.raises(SystemExit) as stop:
        await env.process_manager()
    message = str(stop.value.code)
    assert message.startswith("process stopped after 0 written group(s): ")
    assert f"the model server at http://127.0.0.1:{port}/v1 should answer chat completions" in message
    assert "ConnectionRefusedError" in message and "Fix: start the model server" in message
    logged = [r.getMessage() for r in caplog.records]
    assert not [m for m in logged if "model call failed" in m or "retrying" in m], logged
    assert not set(active_sandboxes()) - before


class TextEnv(FileEnv):
    """No tools; 1.0 when the final answer holds 42."""

    async def compute_reward(self, item: dict, result: Any, ctx: Any) -> float:
        return 1.0 if "42" in str(result.messages[-1].get("content")) else 0.0


# atroposlib's process run never learns a trainer's max length, and says so once per written group.
@pytest.mark.filterwarnings("ignore:Trainer requested to ignore max length:UserWarning")
def test_a_process_run_whose_server_fails_mid_run_keeps_the_groups_written_and_stops_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The first group's two requests are answered (one right, one wrong: atroposlib skips a group whose scores
    # are all equal), then the server fails every request (HTTP 500): the run
    # stops after that group with our message, without atroposlib's "Failed to process group, retrying..."
    # (which it used to print before stopping), and the written group is in the file.
    answered = []

    def policy(body: dict) -> str:
        if len(answered) >= 2:
            raise RuntimeError("the model crashed")
        answered.append(body)
        return "Answer: 42" if len(answered) == 1 else "Answer: 7"

    out = tmp_path / "groups.jsonl"
    with FakeOpenAIServer(policy=policy, strict=False) as srv:
        url = srv.base_url
        env = process_env(
            build(TextEnv, srv, enabled_toolsets=[], data_path_to_save_groups=str(out)),
            groups=3,
        )
        disable_client_retries(env.server)
        with fast_retries(), caplog.at_level(logging.INFO), pytest.raises(SystemExit) as stop:
            asyncio.run(env.process_manager())
    message = str(stop.value.code)
    assert message.startswith("process stopped after 1 written group(s): ")
    assert "2 of 2 rollouts" in message and "5xx" in message and url in message
    logged = [r.getMessage() for r in caplog.records]
    assert not [m for m in logged if "retrying" in m], logged
    (group,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(group["scores"]) == [0.0, 1.0]
    assert out.with_suffix(".html").exists()  # the viewer page of the written groups, as at a normal end


class EvalEnv(FileEnv):
    """evaluate() as the contract shows it: a hand-built loop per item, scored, logged with evaluate_log."""

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        from environments.agent_loop import HermesAgentLoop

        samples = []
        for question in ("a", "b"):
            loop = HermesAgentLoop(
                server=self.server, tool_schemas=[], valid_tool_names=set(), temperature=0.0
            )
            result = await loop.run([{"role": "user", "content": question}])
            samples.append({"question": question, "score": 1.0 if "42" in str(result.messages[-1]) else 0.0})
        accuracy = sum(s["score"] for s in samples) / len(samples)
        await self.evaluate_log(metrics={"eval/accuracy": accuracy}, samples=samples)


def assert_eval_server_errors_reported(env: FileEnv, port: int, tmp_path: Path, caplog: Any) -> None:
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert (
        metrics["results"]["all"]["eval/api_errors"] == 2 and metrics["results"]["all"]["eval/rollouts"] == 2
    )
    (warning,) = [
        r.getMessage() for r in caplog.records if "should answer every eval rollout" in r.getMessage()
    ]
    assert f"http://127.0.0.1:{port}/v1" in warning and "2 of 2" in warning and "eval/api_errors" in warning
    assert env.eval_server_errors == 2


async def test_eval_rollouts_that_failed_on_the_server_are_counted_not_silent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a script calling the author's evaluate() itself enters watching_evaluate(), as the drivers do
    port = dead_port()
    env = dead_env(port, EvalEnv, data_dir_to_save_evals=str(tmp_path))
    await env.setup()
    with fast_retries(), caplog.at_level(logging.WARNING), env.watching_evaluate():
        await env.evaluate()
    assert_eval_server_errors_reported(env, port, tmp_path, caplog)


async def test_the_evaluate_subcommand_reports_eval_server_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """atroposlib's ``evaluate`` subcommand runs ``env._run_evaluate()``: setup, then the author's evaluate() (not
    wrapped: the env's driver watches it)."""
    port = dead_port()
    env = dead_env(port, EvalEnv, data_dir_to_save_evals=str(tmp_path))
    with fast_retries(), caplog.at_level(logging.WARNING):
        await env._run_evaluate()
    assert_eval_server_errors_reported(env, port, tmp_path, caplog)


async def test_an_eval_during_serve_reports_eval_server_errors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``serve`` starts evals as tasks from env_step_checks; the report comes when the eval task ends."""
    port = dead_port()
    env = dead_env(port, EvalEnv, data_dir_to_save_evals=str(tmp_path), steps_per_eval=2)
    await env.setup()
    env.curr_step = 1
    env.status_dict = {"current_step": 2}  # step 2 was reached: an eval is due
    env.items_sent_this_step = 0
    with fast_retries(), caplog.at_level(logging.WARNING):
        await env.env_step_checks()
        assert env.eval_runner is not None
        await env.eval_runner
        await asyncio.sleep(0)  # the eval task's done callbacks run after its awaiters resume
    assert_eval_server_errors_reported(env, port, tmp_path, caplog)
