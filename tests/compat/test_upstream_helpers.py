"""Each upstream helper the env files import does what those files rely on (terminal_tool task functions,
the tool pool, reasoning extraction, _run_tool_in_thread, patches, the host loop, the budget settings)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import environments  # noqa: F401  (installs the tools.* stand-ins, as an upstream env file's first import does)
from environments.agent_loop import _extract_reasoning_from_message, resize_tool_pool
from environments.host_loop import LocalHostLoop, LoopStep
from environments.patches import applied_patches, apply_patches
from environments.tool_context import _run_tool_in_thread
from hermes_envs.env import HermesAgentEnvConfig
from hermes_envs.tools import active_sandboxes, cleanup_sandbox, get_sandbox

# isort: split
from tools.terminal_tool import (
    cleanup_all_environments,
    cleanup_vm,
    clear_task_env_overrides,
    register_task_env_overrides,
    task_env_overrides,
)


# ----------------------------------------------------------------------------- tools.terminal_tool
def test_overrides_are_kept_merged_and_cleared() -> None:
    register_task_env_overrides("t-keep", {"docker_image": "img:1", "modal_image": "img:1"})
    register_task_env_overrides("t-keep", {"docker_image": "img:2"})
    try:
        assert task_env_overrides("t-keep") == {"docker_image": "img:2", "modal_image": "img:1"}
    finally:
        clear_task_env_overrides("t-keep")
        cleanup_vm("t-keep")
    assert task_env_overrides("t-keep") == {}


def test_a_host_cwd_override_is_where_the_tasks_commands_run(tmp_path: Path) -> None:
    register_task_env_overrides("t-cwd", {"cwd": str(tmp_path)})
    try:
        assert get_sandbox("t-cwd").run("pwd")["output"].strip() == str(tmp_path)
    finally:
        cleanup_vm("t-cwd")
        clear_task_env_overrides("t-cwd")
    assert tmp_path.is_dir()  # ending the sandbox never removes the env's own folder


def test_a_container_path_cwd_is_reported_once_and_commands_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    try:
        register_task_env_overrides("t-app", {"cwd": "/compat-test-app"})
        box = get_sandbox("t-app")
        pwd = box.run("pwd")["output"].strip()
        # Either the sandbox maps container-style paths into the task's tree, or it says why it cannot.
        assert pwd.startswith(str(box.workdir))
        if pwd == str(box.workdir):
            assert "/compat-test-app" in caplog.text
    finally:
        cleanup_vm("t-app")
        clear_task_env_overrides("t-app")


def test_cleanup_vm_and_cleanup_all_environments_end_the_sandboxes() -> None:
    for task in ("t-a", "t-b"):
        get_sandbox(task).write_text("x.txt", "1")
    cleanup_vm("t-a")
    assert "t-a" not in active_sandboxes() and "t-b" in active_sandboxes()
    assert cleanup_all_environments() >= 1
    assert active_sandboxes() == []
    cleanup_vm("never-existed")  # a no-op, as upstream


def test_bad_overrides_say_what_to_pass() -> None:
    with pytest.raises(ValueError, match="overrides should be a dict"):
        register_task_env_overrides("t", ["cwd"])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- environments.agent_loop
async def test_resize_tool_pool_sizes_the_pool_tools_run_in() -> None:
    import environments.agent_loop as agent_loop

    resize_tool_pool(3)
    try:
        assert agent_loop._tool_executor._max_workers == 3
        assert agent_loop._tool_executor._work_queue.qsize() == 0  # upstream reads it for its log line
    finally:
        resize_tool_pool(128)


async def test_resizing_the_pool_shuts_the_previous_one_down() -> None:
    # upstream's resize_tool_pool shuts the old pool down (wait=False): its idle threads do not outlive the resize
    import environments.agent_loop as agent_loop

    before = agent_loop._tool_executor
    resize_tool_pool(5)
    try:
        assert before._shutdown and agent_loop._tool_executor is not before
        assert agent_loop._tool_executor._max_workers == 5
    finally:
        resize_tool_pool(128)


async def test_a_shut_down_pool_is_replaced_on_the_next_tool_call() -> None:
    from environments.agent_loop import _tool_executor
    from hermes_envs.tools.sandbox import run_off_loop

    _tool_executor.shutdown(wait=False, cancel_futures=True)
    assert await run_off_loop(threading.current_thread) is not threading.current_thread()


@pytest.mark.parametrize(
    "message, expected",
    [
        (SimpleNamespace(reasoning_content="a", reasoning=None, reasoning_details=None), "a"),
        (SimpleNamespace(reasoning_content=None, reasoning="b", reasoning_details=None), "b"),
        ({"reasoning_details": [{"text": "c"}]}, "c"),
        (SimpleNamespace(reasoning_content=None, reasoning=None, reasoning_details=None), None),
    ],
)
def test_extract_reasoning_from_message(message: object, expected: str | None) -> None:
    assert _extract_reasoning_from_message(message) == expected


# ----------------------------------------------------------------------------- environments.tool_context
def test_run_tool_in_thread_from_sync_code() -> None:
    try:
        out = json.loads(_run_tool_in_thread("terminal", {"command": "echo hi > f.txt; cat f.txt"}, "t-sync"))
        assert out["output"].strip() == "hi" and out["exit_code"] == 0
    finally:
        cleanup_sandbox("t-sync")


async def test_run_tool_in_thread_inside_a_running_loop_runs_off_the_loop_thread() -> None:
    # registered in the shared registry for this test only (patching the module's registry raced with the env
    # loader, which gives later imports a fresh ``environments.tool_context`` module)
    from hermes_envs.tools import registry, tool

    with registry.isolated():

        @tool(toolset="t")
        def whereami(task_id: str) -> str:
            """Name the thread and task the tool ran for."""
            return f"{threading.current_thread().name} {task_id}"

        thread, task = _run_tool_in_thread("whereami", {}, "t-async").split()
    assert task == "t-async" and thread != threading.current_thread().name
    await asyncio.sleep(0)  # the loop is still ours


# ----------------------------------------------------------------------------- environments.patches
def test_apply_patches_is_idempotent_and_says_nothing_needed_patching() -> None:
    assert apply_patches() == [] and apply_patches() == []
    assert applied_patches() == []


# ----------------------------------------------------------------------------- environments.host_loop
def test_host_loop_runs_tools_audits_and_writes_a_manifest(tmp_path: Path) -> None:
    replies = iter(["TOOL: double 21", "TOOL: fail x", "FINAL: 42"])
    manifest = tmp_path / "run.json"
    loop = LocalHostLoop(
        planner=lambda prompt: next(replies),
        tools={"double": lambda arg: {"ok": True, "value": int(arg) * 2}, "fail": lambda arg: 1 / 0},
        manifest_path=str(manifest),
    )
    outcome = loop.run("double 21")
    assert outcome["answer"] == "42" and outcome["run_id"] == loop.run_id
    executed = [s for s in loop.steps if s.role == "executor"]
    assert [(s.action, s.ok) for s in executed] == [("double", True), ("fail", False)]
    record = json.loads(manifest.read_text())
    assert record["answer"] == "42" and record["steps"][0] == {
        "turn": 0, "role": "planner", "action": "task", "detail": "double 21", "ok": None
    }  # fmt: skip
    assert isinstance(loop.steps[0], LoopStep)


def test_host_loop_stops_at_the_step_budget(tmp_path: Path) -> None:
    loop = LocalHostLoop(planner=lambda p: "thinking...", max_steps=2, manifest_path=str(tmp_path / "m.json"))
    assert loop.run("task")["answer"] == "[incomplete: step budget]"


def test_host_loop_default_planner_without_a_local_model_ends_with_an_error_answer(tmp_path: Path) -> None:
    loop = LocalHostLoop(manifest_path=str(tmp_path / "m.json"), max_steps=1)
    loop.OLLAMA_URL = "http://127.0.0.1:9/api/generate"  # nothing listens on the discard port
    assert loop.run("hello")["answer"].startswith("planner error")


# ----------------------------------------------------------------------------- budget settings
def test_build_budget_config_carries_the_env_settings() -> None:
    config = HermesAgentEnvConfig(
        default_result_size_chars=500, turn_budget_chars=900, preview_size_chars=50,
        tool_result_overrides={"terminal": 100},
    )  # fmt: skip
    budget = config.build_budget_config()
    assert (budget.default_result_size, budget.turn_budget, budget.preview_size) == (500, 900, 50)
    assert budget.resolve_threshold("terminal") == 100 and budget.resolve_threshold("search_files") == 500
    assert budget.resolve_threshold("read_file") == float("inf")
    defaults = HermesAgentEnvConfig().build_budget_config()
    # upstream's current defaults (its tools.budget_config lowered them from 100 000 / 200 000)
    assert (defaults.default_result_size, defaults.turn_budget, defaults.preview_size) == (
        32_768,
        65_536,
        1_500,
    )
