"""Our own upstream-style env files (tests/compat/envs) import and run against the fake server, using each
upstream symbol the way the real upstream env files do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs.testing._process_run import run_process
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import active_sandboxes

from .conftest import ENVS, build, load_env_module

ROOT = Path(__file__).resolve().parents[2]


def call(name: str, **arguments: object) -> dict:
    return {"name": name, "arguments": arguments}


BENCH_SCRIPT = {
    "scripts": {
        "^Create greeting.txt": {
            "turns": [
                {"tool_calls": [call("write_file", path="greeting.txt", content="hello\n")]},
                {"content": "Done."},
            ]
        },
        "^Write the number 3": {
            "turns": [{"tool_calls": [call("terminal", command="echo 2 > count.txt")]}, {"content": "Done."}]
        },
    }
}


async def test_bench_eval_env_scores_each_task_and_cleans_every_sandbox(tmp_path: Path) -> None:
    mod = load_env_module("bench_eval_env")
    before = set(active_sandboxes())  # what other tests of this worker left is not this test's to judge
    with FakeOpenAIServer(script=BENCH_SCRIPT, strict=True) as server:
        env = build(mod.BenchEvalEnv, server.base_url, tmp_path)
        await env.setup()
        await env.evaluate()
        server.assert_no_failures()
    by_name = {r["task_name"]: r for r in env.results}
    assert by_name["make-greeting"]["passed"] and by_name["make-greeting"]["reward"] == 1.0
    assert not by_name["count-lines"]["passed"]  # the scripted model wrote 2, not 3
    assert {r["termination"] for r in env.results} == {"stop"}
    assert set(active_sandboxes()) <= before
    metrics = json.loads((tmp_path / "evals" / "metrics.json").read_text())["results"]["all"]
    assert metrics["eval/pass_rate"] == 0.5


async def test_tools_still_run_after_the_env_shut_the_tool_pool_down(tmp_path: Path) -> None:
    mod = load_env_module("bench_eval_env")
    with FakeOpenAIServer(script=BENCH_SCRIPT, strict=True) as server:
        env = build(mod.BenchEvalEnv, server.base_url, tmp_path)
        await env.setup()
        await env.evaluate()  # ends with _tool_executor.shutdown(wait=False, cancel_futures=True)
        await env.evaluate()  # a second evaluation in the same process still runs its tools
    assert {r["task_name"] for r in env.results if r["passed"]} == {"make-greeting"}


COUNCIL_SCRIPT = {
    "scripts": {
        "^Research this question": {
            "turns": [{"content": "Thermal expansion: steel grows with heat. See https://example.org/joints"}]
        },
        "^Evaluate this content": {
            "turns": [
                {"content": "- solid physics (https://example.org/thermal)\nCONFIDENCE: 80%\nDISSENT: false"}
            ]
        },
    }
}


async def test_council_reward_asks_every_judge_through_the_envs_own_server(tmp_path: Path) -> None:
    mod = load_env_module("council_reward_env")
    with FakeOpenAIServer(script=COUNCIL_SCRIPT, strict=True) as server:
        env = build(mod.CouncilRewardEnv, server.base_url, tmp_path, group_size=2)
        await env.setup()
        group, _ = await env.collect_trajectories(mod.QUESTIONS[0])
        server.assert_no_failures()
        judge_calls = [c for c in server.chat_calls if "review council" in c.body["messages"][0]["content"]]
    assert env.reward_error_count == 0, env.reward_errors
    assert len(judge_calls) == 2 * 5  # four judges and the arbiter, per rollout
    assert group["scores"] == [pytest.approx(0.8 * 0.8 + 0.2 * 1.0)] * 2
    assert env.dpo_buffer == []  # nobody dissented


async def test_workdir_override_pins_the_terminal_to_the_case_folder(tmp_path: Path) -> None:
    mod = load_env_module("workdir_cases_env")
    script = {
        "scripts": {
            "^\\[Working directory": {
                "turns": [
                    {
                        "tool_calls": [call("terminal", command="echo two >> notes.txt")],
                        "reasoning_content": "hm",
                    },
                    {"content": "Appended."},
                ]
            }
        }
    }
    before = set(active_sandboxes())  # (other tests of this worker may hold theirs)
    with FakeOpenAIServer(script=script, strict=True) as server:
        env = build(mod.WorkdirCasesEnv, server.base_url, tmp_path, scratch_dir=str(tmp_path / "cases"))
        await env.setup()
        await env.evaluate()
        server.assert_no_failures()
    [record] = env.records
    assert record["reward"] == 1.0
    assert record["host_file"] == "one\ntwo\n"  # the command ran in the registered host folder
    assert record["files"] == ["notes.txt"]
    assert record["reasoning"][0] == "hm"
    assert set(active_sandboxes()) <= before


@pytest.mark.slow
def test_council_env_process_command_runs_offline(tmp_path: Path) -> None:
    script = tmp_path / "council.json"
    script.write_text(json.dumps(COUNCIL_SCRIPT))
    with FakeOpenAIServer(script=COUNCIL_SCRIPT, strict=True) as server:
        done = run_process(ENVS / "council_reward_env.py", tmp_path, server.base_url, cwd=ROOT)
        server.assert_no_failures()
    assert done.returncode == 0, done.stderr[-3000:]
    groups = [json.loads(line) for line in (tmp_path / "council_reward_env.jsonl").read_text().splitlines()]
    assert len(groups) == 1 and groups[0]["scores"] == [pytest.approx(0.84)] * 2


@pytest.mark.slow
def test_bench_env_evaluate_command_runs_offline(tmp_path: Path) -> None:
    from hermes_envs.testing.offline import offline_environ, offline_tokenizer_path

    with FakeOpenAIServer(script=BENCH_SCRIPT, strict=True) as server:
        cmd = [
            sys.executable, str(ENVS / "bench_eval_env.py"), "evaluate",
            "--env.use_wandb", "False", "--env.tokenizer_name", offline_tokenizer_path(),
            "--env.data_dir_to_save_evals", str(tmp_path / "evals"),
            "--openai.base_url", server.base_url, "--openai.model_name", "fake", "--openai.api_key", "x",
            "--openai.health_check", "False",
        ]  # fmt: skip
        done = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=240,
            env={**os.environ, **offline_environ()},
            cwd=ROOT,
        )
        server.assert_no_failures()
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = json.loads((tmp_path / "evals" / "metrics.json").read_text())["results"]["all"]
    assert metrics["eval/pass_rate"] == 0.5
