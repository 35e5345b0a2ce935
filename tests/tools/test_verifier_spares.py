"""The reward's fresh shells started ahead (issue 28's speed half): a spare serves ONE verification command and is
closed after it, carries nothing of an earlier one, sees the task's environment (not the agent's) and files as a
shell started at the call would, keeps the limits, and never outlives its sandbox."""

from __future__ import annotations

import json
import secrets
import shutil
import time

import pytest

from hermes_envs.tools import ToolContext, cleanup_sandbox, configure_sandboxes, get_sandbox, registry
from hermes_envs.tools.backends import _fresh, _isolation, _procfs, _workers
from hermes_envs.tools.sandbox import default_manager, verification_spares

NAMESPACED = bool(_isolation.pid_namespace_wrapper())
pytestmark = pytest.mark.skipif(
    not NAMESPACED, reason="spares are kept only where shells get a PID namespace"
)
KINDS = ["local", "container"] + (["bwrap"] if shutil.which("bwrap") else [])


@pytest.fixture(autouse=True)
def _rewards_verify():
    """As in a process whose rewards already ran a verification command (spares start with the task's shell)."""
    with verification_spares(True):
        yield


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    configure_sandboxes(backend=request.param)
    return request.param


def terminal(command: str, task: str = "t") -> dict:
    return json.loads(registry.dispatch("terminal", {"command": command}, task))


def _spare_ready(task: str = "t") -> _fresh.FreshShells:
    """The task's fresh shells, once a spare waits (the first command of the task starts one)."""
    fresh = get_sandbox(task).backend.fresh
    end = time.monotonic() + 60
    while not fresh.ready() and time.monotonic() < end:
        time.sleep(0.005)
    assert fresh.ready(), "no spare fresh shell was started for the task"
    return fresh


def _gone(marker: bytes) -> bool:
    """True once no process carries ``marker`` in its environment (waits for the kernel to finish killing)."""
    end = time.monotonic() + 30
    while _procfs.pids_with_marker(marker) and time.monotonic() < end:
        time.sleep(0.02)
    return _procfs.pids_with_marker(marker) == []


def test_a_spare_serves_one_command_and_carries_nothing_of_the_one_before(kind):
    terminal("true")
    ctx = ToolContext("t")
    fresh = _spare_ready()
    first = ctx.terminal(
        'echo "$HERMES_SANDBOX_ID"; export VERDICT=pass; false() { echo "12 passed"; return 0; }; '
        "shopt -s expand_aliases; alias test='echo 12 passed'; trap 'echo 12 passed' DEBUG; cd /; "
        "nohup sleep 600 >/dev/null 2>&1 &"
    )
    assert first["exit_code"] == 0, first
    first_id = first["output"].split()[0]
    _spare_ready()
    second = ctx.terminal(
        'echo "$HERMES_SANDBOX_ID [$VERDICT]"; false; echo "$?"; test -f missing; pwd; ps -eo args'
    )
    lines = second["output"].splitlines()
    box = get_sandbox("t")
    assert lines[0].split()[0] != first_id and lines[0].endswith(" []"), second  # another shell, no variable
    assert lines[1:4] == ["1", box.backend.shell_path(box.workdir), *lines[3:4]], second  # no function, no cd
    assert "12 passed" not in second["output"] and "sleep 600" not in second["output"], second
    assert (fresh.from_spare, fresh.started_cold) == (2, 0)  # both were spares, each used once
    assert _gone(f"HERMES_SANDBOX_ID={first_id}".encode())  # the first one's background job died with it


def test_a_spare_sees_the_task_id_its_pre_started_sandbox_was_handed_to_not_the_placeholder():
    configure_sandboxes(prestart=1)
    terminal("true", "warm")
    end = time.monotonic() + 60
    while default_manager.prepared() < 1 and time.monotonic() < end:
        time.sleep(0.01)
    box = get_sandbox("adopted")
    assert (
        box.backend.shell.proc is not None
    )  # a pre-started sandbox, its spare started with the placeholder id
    fresh = _spare_ready("adopted")
    assert ToolContext("adopted").terminal("echo $HERMES_TASK_ID")["output"] == "adopted\n"
    assert fresh.from_spare == 1


def test_a_spare_sees_the_task_tree_as_it_is_now_not_as_it_was_when_it_started(monkeypatch):
    configure_sandboxes(backend="container")
    terminal("true")
    if get_sandbox("t").backend.mode == "mapped":
        pytest.skip("the task's root is the shell's / only with bubblewrap or as root")
    fresh = _spare_ready()
    # no next spare starting during the call (its start repairs the links too): the call's own repair is tested
    monkeypatch.setattr(fresh, "ensure_spare", lambda: None)
    # the agent moves the workspace away and swaps /bin (a link into the read-only /usr) for its own folder
    swap = terminal(
        "cd / && mv workspace old && mkdir workspace && echo new > workspace/f && rm /bin && mkdir /bin && "
        "printf '#!/usr/bin/env sh\\necho 12 passed\\n' > /bin/false && chmod +x /bin/false && /bin/false"
    )
    assert swap["output"] == "12 passed\n", swap
    run = ToolContext("t").terminal("cat f; pwd; test -L /bin && echo link; /bin/false; echo $?")
    assert run == {"exit_code": 0, "output": "new\n/workspace\nlink\n1\n"}
    assert fresh.from_spare == 1


def test_a_spare_keeps_the_timeout_and_the_disk_quota(kind):
    configure_sandboxes(backend=kind, max_disk_mb=20)
    terminal("true")
    ctx = ToolContext("t")
    fresh = _spare_ready()
    slow = get_sandbox("t").execute("sleep 30; echo late", timeout=1, fresh=True)
    assert slow.timed_out and slow.exit_code == 124 and "late" not in slow.output
    _spare_ready()
    big = ctx.terminal("head -c 100000000 /dev/zero > big.bin && echo wrote")
    assert big["exit_code"] == 137 and "Disk quota exceeded" in big["output"], big
    assert not (get_sandbox("t").workdir / "big.bin").exists()
    assert fresh.from_spare == 2


@pytest.mark.parametrize("when", ["waiting", "starting"])
def test_no_spare_outlives_its_sandbox(kind, when):
    task = "spare-leak-" + secrets.token_hex(6)
    terminal("true", task)  # every process of the task, spares included, carries HERMES_TASK_ID=<task>
    fresh = _spare_ready(task)
    if when == "starting":  # cleaned up while the next spare starts (it starts as the command begins)
        ToolContext(task).terminal("true")
    cleanup_sandbox(task)
    _workers.flush()  # a spare whose start ends after the cleanup is closed by then
    assert not fresh.ready() and fresh.in_use is None
    assert _gone(f"HERMES_TASK_ID={task}".encode())


def test_no_spare_is_kept_where_the_shell_has_no_pid_namespace():
    """Without one, the agent's processes could find a waiting spare in /proc and write into its stdin."""
    configure_sandboxes(pid_namespace=False)
    terminal("true")
    ctx = ToolContext("t")
    assert ctx.terminal("echo ok")["output"] == "ok\n"
    _workers.flush()
    fresh = get_sandbox("t").backend.fresh
    assert not fresh.ready() and (fresh.from_spare, fresh.started_cold) == (0, 1)


def test_no_spare_is_started_until_a_reward_of_this_process_runs_a_verification_command():
    """An env whose reward never uses ToolContext's commands pays no spare per rollout."""
    with verification_spares(False):
        _no_spare_until_a_verification_command()


def _no_spare_until_a_verification_command() -> None:
    terminal("true")
    terminal("true", "other")
    _workers.flush()
    assert not get_sandbox("t").backend.fresh.ready() and not get_sandbox("other").backend.fresh.ready()
    assert ToolContext("t").terminal("echo ok")["output"] == "ok\n"  # started for it; from now on, ahead
    _spare_ready("t")
    terminal("true", "other")  # the next command of any task starts its task's spare
    _spare_ready("other")
