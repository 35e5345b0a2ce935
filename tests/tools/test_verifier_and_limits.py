"""Red-team breaks of issue 28 in the sandbox itself, each reproduced: a verifier the agent could forge (its shell
state, the control pipe), the private /proc unmounted by root, and the disk quota that short commands escaped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from hermes_envs.tools import ToolContext, configure_sandboxes, get_sandbox, registry
from hermes_envs.tools.backends import _isolation

NAMESPACED = bool(_isolation.pid_namespace_wrapper())
needs_namespace = pytest.mark.skipif(not NAMESPACED, reason="no PID namespace can be made on this machine")
FORGE = (  # what a command needs to forge its shell's completion line: the token (from the wrapper) and the nonce
    'tok=$(declare -f __h | grep -o "__hermes_done_[0-9a-f]*" | head -1); line="$tok:$__h_n:0:0"; '
)


def terminal(command: str, task: str = "t", **args: object) -> dict:
    return json.loads(registry.dispatch("terminal", {"command": command, **args}, task))


# ------------------------------------------------------------------ the verifier's shell
AGENT_STATE = [
    'false() { echo "12 passed"; return 0; }',  # a function shadowing the program the reward runs
    "shopt -s expand_aliases; alias test='echo 12 passed; true'",
    "mkdir -p fake && printf '#!/bin/sh\\necho 12 passed\\n' > fake/grep && chmod +x fake/grep "
    '&& export PATH="$PWD/fake:$PATH"',
    "cd /",
    "trap 'echo 12 passed' EXIT; trap 'echo 12 passed' DEBUG",
    "export VERDICT=pass",
]


def test_the_reward_runs_in_a_shell_the_agent_never_touched(backend):
    for command in AGENT_STATE:
        terminal(command)
    assert terminal("false")["exit_code"] == 0  # the agent's own shell keeps what it did to itself
    ctx = ToolContext("t")
    assert ctx.terminal("false") == {"exit_code": 1, "output": ""}
    assert ctx.terminal("test -f missing") == {"exit_code": 1, "output": ""}
    assert ctx.terminal("echo no | grep yes") == {"exit_code": 1, "output": ""}
    assert ctx.terminal("pwd")["output"].strip() == str(get_sandbox("t").workdir)
    assert ctx.terminal('echo "[$VERDICT]"')["output"] == "[]\n"
    assert ctx.terminal("cat fake/grep")["exit_code"] == 0  # the same files
    # call_tool's commands too
    assert json.loads(ctx.call_tool("terminal", {"command": "false"}))["exit_code"] == 1


def test_the_agent_cannot_redefine_its_shells_own_wrapper(backend):
    assert "readonly" in terminal('__h_run() { echo "12 passed"; return 0; }')["output"]
    assert terminal("false")["exit_code"] == 1
    assert ToolContext("t").terminal("false")["exit_code"] == 1


@needs_namespace
def test_the_agents_background_processes_cannot_see_the_reward_shell(backend):
    # (waits until the job has exec'd sleep: on a loaded machine a bare `&` may still be a forked bash at the ps)
    terminal(
        "nohup sleep 600 >/dev/null 2>&1 & until ps -eo args | grep -q '^sleep 600'; do sleep 0.01; done"
    )
    assert "sleep 600" in terminal("ps -eo args")["output"]
    seen = ToolContext("t").terminal("ps -eo args")
    assert "sleep 600" not in seen["output"], (
        seen
    )  # another PID namespace: not even visible, let alone reachable


async def test_the_awaitable_reward_terminal_is_fresh_too(backend):
    terminal("cd / && export VERDICT=pass")
    run = await ToolContext("t").aterminal('echo "[$VERDICT]"; pwd')
    assert run["output"] == f"[]\n{get_sandbox('t').workdir}\n"


# ------------------------------------------------------------------ the control pipe
def test_a_command_writing_the_control_line_itself_does_not_end_its_call(backend):
    forged = get_sandbox("t").execute(FORGE + 'echo "$line" > /proc/$$/fd/11; sleep 5; echo late', timeout=1)
    assert forged.exit_code == 124 and forged.timed_out  # not the forged 0 at once
    assert terminal("echo next")["output"] == "next\n"  # and the next command gets its own output


def test_a_background_program_writing_the_control_line_cannot_end_the_call(backend):
    run = get_sandbox("t").execute(
        FORGE + '(sleep 0.2; echo "$line" > /proc/$$/fd/11) & sleep 1; echo real; exit 3', timeout=20
    )
    assert run.exit_code == 3 and "real" in run.output
    terminal("true")
    stale = get_sandbox("t").execute(
        FORGE + '(for i in 1 2 3 4 5; do sleep 0.1; echo "$line" > /proc/$$/fd/11; done) & echo first'
    )
    assert stale.output == "first\n"
    assert terminal("sleep 0.8; echo second")["output"] == "second\n"  # stale lines are not its completion


# ------------------------------------------------------------------ /proc
@needs_namespace
@pytest.mark.skipif(os.geteuid() != 0, reason="the unmount needs root")
@pytest.mark.parametrize("kind", ["local", "container"])
def test_root_cannot_unmount_the_private_proc_to_reach_the_trainers_environment(kind):
    trainer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import json
                from hermes_envs.tools import configure_sandboxes, registry
                configure_sandboxes(backend={kind!r})
                cmd = "umount -l /proc; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\\\0' '\\\\n' | grep -c PLANTED"
                print(json.loads(registry.dispatch("terminal", {{"command": cmd}}, "t"))["output"], flush=True)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, OPENAI_API_KEY="sk-proj-PLANTED0123456789"),
    )
    out, err = trainer.communicate(timeout=60)
    assert trainer.returncode == 0, err
    assert out.split()[-1] == "0", out  # the umount is refused; the key is nowhere
    assert "must be superuser" in out or "permission denied" in out.lower() or "not permitted" in out


# ------------------------------------------------------------------ disk quota
def test_a_short_command_over_the_disk_quota_is_caught_and_what_it_wrote_removed(backend):
    configure_sandboxes(backend=backend, max_disk_mb=20)
    box = get_sandbox("t")
    assert terminal("head -c 1000000 /dev/zero > kept.bin")["exit_code"] == 0
    run = terminal("head -c 100000000 /dev/zero > big.bin && echo wrote")
    assert run["exit_code"] == 137, run
    assert "Disk quota exceeded" in run["output"] and "big.bin" in run["output"]
    assert not (box.workdir / "big.bin").exists()
    assert (box.workdir / "kept.bin").stat().st_size == 1000000  # older files stay
    assert terminal("echo fine")["exit_code"] == 0  # under the quota again


@pytest.mark.skipif(shutil.which("fallocate") is None, reason="needs fallocate")
def test_an_instant_allocation_over_the_quota_is_removed_too(backend):
    configure_sandboxes(backend=backend, max_disk_mb=20)
    run = terminal("mkdir -p d && fallocate -l 1G d/huge && echo done")
    assert run["exit_code"] == 137 and "d/huge" in run["output"], run
    assert not (get_sandbox("t").workdir / "d" / "huge").exists()


def test_the_reward_shell_is_fresh_on_the_container_backend_too():
    configure_sandboxes(backend="container")
    for command in ("cd /tmp", 'false() { echo "12 passed"; }', "export VERDICT=pass"):
        terminal(command)
    box = get_sandbox("t")
    start = box.backend.shell_path(box.workdir)
    run = ToolContext("t").terminal('false; echo "$? [$VERDICT]"; pwd')
    assert run == {"exit_code": 0, "output": f"1 []\n{start}\n"}
