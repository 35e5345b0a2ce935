from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from hermes_envs.errors import ConfigError, PathEscapeError, SandboxError
from hermes_envs.tools import (
    Sandbox,
    active_sandboxes,
    cleanup_all_sandboxes,
    cleanup_sandbox,
    configure_sandboxes,
    get_sandbox,
    sandbox_config,
)
from hermes_envs.tools import sandbox as sandbox_module
from hermes_envs.tools.backends import _isolation, _procfs
from hermes_envs.tools.sandbox import default_manager


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pid: int, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


# ------------------------------------------------------------------ basics and the persistent shell
def test_run_merges_stdout_and_stderr_with_exact_exit_codes(backend):
    box = get_sandbox("t")
    assert box.run("echo out; echo err >&2") == {"exit_code": 0, "output": "out\nerr\n"}
    assert box.run("false")["exit_code"] == 1
    assert box.run("(exit 42)")["exit_code"] == 42
    assert box.run("no-such-command-xyz")["exit_code"] == 127
    assert box.run("printf 'no newline'")["output"] == "no newline"


def test_shell_persists_cwd_and_exports_between_calls(backend):
    box = get_sandbox("t")
    assert box.run("pwd")["output"].strip() == str(box.workdir)
    box.run("mkdir -p sub/dir && cd sub/dir && export GREETING=hello && LOCALVAR=1")
    assert box.run("pwd")["output"].strip() == str(box.workdir / "sub" / "dir")
    assert box.run("echo $GREETING")["output"] == "hello\n"


def test_commands_read_stdin_from_dev_null(backend):
    box = get_sandbox("t")
    assert box.run("cat; echo done", timeout=5) == {"exit_code": 0, "output": "done\n"}


def test_exit_ends_the_shell_with_its_code_and_the_next_call_gets_a_fresh_one(backend):
    box = get_sandbox("t")
    box.run("cd / && export X=1")
    assert box.run("echo bye; exit 5") == {"exit_code": 5, "output": "bye\n"}
    assert box.run("pwd; echo ${X:-unset}")["output"] == f"{box.workdir}\nunset\n"


def test_a_shell_that_exited_is_not_signalled_by_its_old_pid(monkeypatch, backend):
    """Once the namespace's init has exited its pid can belong to another process: it must never be killed."""
    box = get_sandbox("t")
    box.run("true")
    init = box.backend.shell.namespace_init
    if init is None:
        pytest.skip("no PID namespace on this machine")
    ns = box.backend.shell.namespace
    outside: list[int] = []  # pids SIGKILLed at a moment they were not (or no longer) in the task's namespace
    real_kill = os.kill

    def spy(pid: int, sig: int) -> None:  # (at the OS boundary: every kill of this process passes here)
        if sig == signal.SIGKILL and _procfs.pid_namespace(pid) != ns:
            outside.append(pid)
        real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", spy)
    assert box.run("exit 3")["exit_code"] == 3
    box.cleanup()
    assert init not in outside


def test_multiline_and_quoted_commands(backend):
    box = get_sandbox("t")
    out = box.run('for i in 1 2; do\n  echo "it\'s $i"\ndone\necho \'$HOME\' "\\\\"')["output"]
    assert out == "it's 1\nit's 2\n$HOME \\\n"


def test_command_cannot_forge_the_completion_marker(backend):
    box = get_sandbox("t")
    shell = box.backend.shell
    forged = f"printf '%s:0\\n' {shell.token}; printf '%s:0\\n' {shell.token} >&2; sleep 0.2; exit 3"
    assert box.run(forged)["exit_code"] == 3


# ------------------------------------------------------------------ timeouts
def test_timeout_kills_the_command_but_not_the_shell(backend):
    box = get_sandbox("t")
    box.run("cd /tmp 2>/dev/null; mkdir -p $HOME/w && cd $HOME/w && export KEEP=yes")
    result = box.execute("echo started; sleep 30; echo never", timeout=0.5)
    assert result.timed_out and result.exit_code == 124
    assert "started" in result.output and "never" not in result.output
    assert "timed out after 0.5s" in result.output
    assert result.duration < 10
    # the same shell: state survived
    assert box.run("pwd; echo $KEEP")["output"] == f"{box.workdir / 'w'}\nyes\n"


def test_timeout_of_a_shell_builtin_loop(backend):
    box = get_sandbox("t")
    result = box.execute("export A=1; while :; do :; done; echo never", timeout=0.3)
    assert result.exit_code == 124 and "never" not in result.output
    assert box.run("echo $A")["output"] == "1\n"


def test_timeout_kills_the_commands_background_children_but_not_earlier_jobs(backend):
    box = get_sandbox("t")
    box.run("sleep 60 & echo $! > earlier.pid")
    box.run("(sleep 60 & echo $! > child.pid; wait)", timeout=0.5)
    # pids are namespace-local under bwrap: look from inside the sandbox (a zombie counts as dead)
    alive = 's=$(cut -d\' \' -f3 /proc/$(cat {})/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && echo alive || echo dead'
    assert box.run(alive.format("child.pid"))["output"].endswith("dead\n")
    assert box.run(alive.format("earlier.pid"))["output"].endswith("alive\n")


def test_timeout_argument_is_validated_and_capped(backend):
    configure_sandboxes(backend=backend, timeout=5, max_timeout=7)
    box = get_sandbox("t")
    assert box._timeout(None) == 5
    assert box._timeout(100) == 7
    for bad in (0, -1, "3", True):
        with pytest.raises(ValueError, match="timeout should be a positive number"):
            box.run("true", timeout=bad)


def test_a_shell_that_ignores_the_timeout_kill_is_replaced(backend):
    # (after the shell's grace of 2 s to come back from the kill)
    box = get_sandbox("t")
    box.run("export GONE=1")
    # a trap-proof subshell loop that re-spawns: USR1 is ignored and the shell itself keeps running builtins
    result = box.execute("trap '' USR1; while :; do :; done", timeout=0.3)
    assert result.exit_code == 124 and result.timed_out
    assert box.run("echo ${GONE:-fresh}")["output"] == "fresh\n"


# ------------------------------------------------------------------ output cap
def test_output_is_capped_keeping_head_and_tail(backend):
    configure_sandboxes(backend=backend, max_output_bytes=1000)
    box = get_sandbox("t")
    result = box.execute("echo HEAD; seq 1 100000; echo TAIL")
    assert result.output.startswith("HEAD\n1\n2\n")
    assert result.output.rstrip().endswith("99999\n100000\nTAIL")
    assert "output truncated" in result.output and f"{result.truncated_bytes} of" in result.output
    assert result.truncated_bytes > 500_000
    assert len(result.output) < 1500


# ------------------------------------------------------------------ environment scrubbing
def test_environment_is_scrubbed_of_secrets(monkeypatch, backend):
    secrets = {
        "OPENAI_API_KEY": "sk-1",
        "ANTHROPIC_APIKEY": "a",
        "HF_TOKEN": "hf",
        "GITHUB_TOKEN": "gh",
        "MY_SECRET_THING": "s",
        "DB_PASSWORD": "p",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "AWS_ACCESS_KEY_ID": "id",
        "GOOGLE_APPLICATION_CREDENTIALS": "/x.json",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LANG", "C.UTF-8")
    box = get_sandbox("t")
    env = box.run("env")["output"]
    for k in secrets:
        assert f"{k}=" not in env
    assert "LANG=C.UTF-8" in env
    assert f"HOME={box.workdir}" in env
    assert "HERMES_TASK_ID=t" in env


# ------------------------------------------------------------------ path refusals
def test_path_escapes_are_refused_with_a_clear_message(backend):
    box = get_sandbox("t")
    for bad in ("../outside.txt", "a/../../x", "/etc/passwd", str(box.workdir.parent / "other")):
        with pytest.raises(PathEscapeError) as info:
            box.resolve_path(bad)
        msg = str(info.value)
        assert repr(bad) in msg and str(box.workdir) in msg and "Fix:" in msg and "resolves to" in msg
        assert isinstance(info.value, PermissionError) and isinstance(info.value, SandboxError)
    with pytest.raises(PathEscapeError):
        box.read_text("../../etc/passwd")
    with pytest.raises(PathEscapeError):
        box.write_text("/tmp/hermes-escape.txt", "x")
    assert not os.path.exists("/tmp/hermes-escape.txt")


def test_symlink_escapes_are_refused(backend):
    box = get_sandbox("t")
    box.run("ln -s /etc link_dir && ln -s /etc/hostname link_file && ln -s ../.. up")
    for bad in ("link_dir/passwd", "link_file", "up/x", "link_dir"):
        with pytest.raises(PathEscapeError, match="outside this task's working directory"):
            box.resolve_path(bad)
    with pytest.raises(PathEscapeError):
        box.write_text("link_dir/new.txt", "x")


def test_paths_inside_are_accepted(backend):
    box = get_sandbox("t")
    box.write_text("a/b/c.txt", "hello")
    assert box.resolve_path("a/b/c.txt") == box.workdir / "a" / "b" / "c.txt"
    assert box.resolve_path(str(box.workdir / "a" / "b" / "c.txt")) == box.workdir / "a/b/c.txt"
    assert box.resolve_path("a/../a/b/c.txt") == box.workdir / "a/b/c.txt"
    assert box.resolve_path(".") == box.workdir
    box.run("ln -s a/b/c.txt inner_link")
    assert box.read_text("inner_link") == "hello"
    assert box.run("cat a/b/c.txt")["output"] == "hello"
    with pytest.raises(FileNotFoundError, match="no file 'missing.txt'"):
        box.read_text("missing.txt")
    with pytest.raises(IsADirectoryError):
        box.read_text("a")


# ------------------------------------------------------------------ isolation between tasks
def test_two_concurrent_tasks_cannot_see_each_others_files(backend):
    a, b = get_sandbox("task-a"), get_sandbox("task-b")
    assert a.workdir != b.workdir

    def work(box: Sandbox, name: str) -> None:
        for i in range(20):
            box.run(f"echo {name}{i} > {name}{i}.txt")

    threads = [threading.Thread(target=work, args=(a, "a")), threading.Thread(target=work, args=(b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(os.listdir(a.workdir)) == sorted(f"a{i}.txt" for i in range(20))
    assert sorted(os.listdir(b.workdir)) == sorted(f"b{i}.txt" for i in range(20))
    with pytest.raises(PathEscapeError):
        a.read_text(str(b.workdir / "b0.txt"))


def test_a_do_nothing_task_after_a_writer_finds_nothing(backend):
    writer = get_sandbox("same-id")
    writer.run("echo solved > answer.txt")
    writer_dir = writer.workdir
    cleanup_sandbox("same-id")
    assert not writer_dir.exists()
    later = get_sandbox("same-id")
    assert later is not writer and later.workdir != writer_dir
    assert later.run("ls -A")["output"] == ""
    other = get_sandbox("another")
    assert other.run("ls -A; cat answer.txt 2>&1 || true")["output"].startswith("cat: answer.txt")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_bwrap_hides_other_tasks_and_gives_a_private_tmp():
    configure_sandboxes(backend="bwrap")
    a, b = get_sandbox("a"), get_sandbox("b")
    a.run("echo secret > mine.txt; echo t > /tmp/private.txt")
    assert b.run(f"cat {a.workdir}/mine.txt")["exit_code"] != 0
    assert b.run("cat /tmp/private.txt")["exit_code"] != 0
    assert not os.path.exists("/tmp/private.txt")
    assert b.run("touch /usr/x")["exit_code"] != 0  # the system is read-only
    assert b.run("ps -e -o pid= | wc -l")["output"].strip() in {"2", "3", "4", "5"}  # own PID namespace


# ------------------------------------------------------------------ resource limits
def test_file_size_limit(backend):
    configure_sandboxes(backend=backend, max_file_size_mb=1)
    box = get_sandbox("t")
    result = box.run("head -c 3000000 /dev/zero > big.bin")
    assert result["exit_code"] != 0
    assert (box.workdir / "big.bin").stat().st_size <= 1024 * 1024


def test_cpu_limit(backend):
    configure_sandboxes(backend=backend, cpu_seconds=1)
    box = get_sandbox("t")
    result = box.execute("bash -c 'while :; do :; done'", timeout=20)
    assert not result.timed_out
    assert result.exit_code == 128 + 24  # SIGXCPU
    assert box.run("echo alive")["output"] == "alive\n"


def test_memory_limit(backend):
    configure_sandboxes(backend=backend, memory_mb=300)
    box = get_sandbox("t")
    result = box.run(f"{sys.executable} -c 'x = bytearray(600 * 1024 * 1024)'", timeout=30)
    assert result["exit_code"] != 0 and "MemoryError" in result["output"]


def test_process_limit_is_set(backend):
    configure_sandboxes(backend=backend, max_processes=64)
    box = get_sandbox("t")
    assert box.run("ulimit -u")["output"].strip() == "64"  # (root is exempt from RLIMIT_NPROC by the kernel)


# ------------------------------------------------------------------ configuration
def test_configure_rejects_unknown_backend_and_settings():
    with pytest.raises(ConfigError, match=r"terminal_backend should be one of \[.*'local'.*\]; got 'dockr'"):
        configure_sandboxes(backend="dockr")
    with pytest.raises(ConfigError, match="unknown setting"):
        configure_sandboxes(cpu_secs=3)
    with pytest.raises(ConfigError, match="positive number"):
        configure_sandboxes(timeout=0)
    with pytest.raises(ConfigError, match="positive int"):
        configure_sandboxes(memory_mb=-5)
    assert sandbox_config().backend == "local"


def test_bwrap_missing_gives_a_clear_message(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    _isolation.reset_probes()
    try:
        with pytest.raises(ConfigError, match="apt-get install bubblewrap"):
            configure_sandboxes(backend="bwrap")
    finally:
        monkeypatch.undo()
        _isolation.reset_probes()


def test_root_folder_is_configurable(scratch):
    configure_sandboxes(root=scratch / "boxes")
    box = get_sandbox("t")
    assert (scratch / "boxes") in box.workdir.parents
    cleanup_all_sandboxes()
    assert list((scratch / "boxes").iterdir()) == []


def test_task_ids_with_odd_characters(backend):
    box = get_sandbox("../../weird id/\n*")
    assert box.workdir.parent == default_manager.root
    assert box.run("echo ok")["output"] == "ok\n"
    with pytest.raises(ValueError):
        get_sandbox("")


# ------------------------------------------------------------------ lifecycle
def test_get_sandbox_is_lazy_and_shared():
    assert get_sandbox("t", create=False) is None
    box = get_sandbox("t")
    assert get_sandbox("t") is box and get_sandbox("t", create=False) is box
    assert box._backend is None  # no shell until the first command
    assert active_sandboxes() == ["t"]


def test_cleanup_kills_processes_and_removes_the_folder(backend):
    box = get_sandbox("t")
    box.run("sleep 60 & echo $! > bg.pid")
    box.run("setsid sleep 61 > /dev/null 2>&1 & echo started")
    shell = box.backend.shell
    members = shell.members()  # the namespace's (or, without one, the session's) processes: setsid included
    escaped = _procfs.pids_with_marker(shell.marker)
    assert len(members) >= 3 and set(escaped) <= set(members) | {shell.proc.pid}
    box.cleanup()
    for pid in set(members) | set(escaped):
        assert _wait_dead(pid), f"process {pid} survived cleanup"
    assert not box.workdir.exists()
    assert active_sandboxes() == []
    box.cleanup()  # idempotent
    cleanup_sandbox("t")
    cleanup_sandbox("never-existed")
    with pytest.raises(SandboxError, match="was cleaned up"):
        box.run("echo")
    with pytest.raises(SandboxError, match="was cleaned up"):
        box.read_text("x")


def test_cleanup_removes_read_only_folders(backend):
    box = get_sandbox("t")
    box.run("mkdir -p ro/inner && touch ro/inner/f && chmod 500 ro/inner ro")
    box.cleanup()
    assert not box.workdir.exists()


def test_cleanup_while_a_command_runs(backend):
    box = get_sandbox("t")
    results = []
    t = threading.Thread(target=lambda: results.append(box.execute("sleep 30", timeout=60)))
    t.start()
    time.sleep(0.3)
    box.cleanup()
    t.join(10)
    assert not t.is_alive() and results and results[0].exit_code != 0


def test_idle_sandboxes_are_reaped_after_their_lifetime():
    configure_sandboxes(lifetime=0.2)
    box = get_sandbox("idle")
    box.run("true")
    busy = get_sandbox("busy")
    busy.last_used = time.monotonic() + 60  # pretend it was just used
    assert sandbox_module.reap_idle(time.monotonic() + 1) == ["idle"]
    assert box.closed and not box.workdir.exists() and active_sandboxes() == ["busy"]
    busy.last_used = time.monotonic()
    end = time.monotonic() + 60
    while active_sandboxes() and time.monotonic() < end:  # the background reaper does the same
        time.sleep(0.05)
    assert active_sandboxes() == []


def test_nothing_is_left_after_interpreter_exit(scratch):
    code = f"""
import sys
from hermes_envs.tools import configure_sandboxes, get_sandbox
configure_sandboxes(root={str(scratch)!r})
for i in range(3):
    box = get_sandbox(f"t{{i}}")
    box.run("echo x > f.txt; sleep 60 & setsid sleep 61 &")
    shell = box.backend.shell
    print(shell.proc.pid, shell.marker.decode(), flush=True)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert len(rows) == 3
    for pid, marker in rows:
        assert _wait_dead(int(pid))
        end = time.monotonic() + 60
        while _procfs.pids_with_marker(marker.encode()) and time.monotonic() < end:
            time.sleep(0.05)
        assert _procfs.pids_with_marker(marker.encode()) == []
    assert list(scratch.iterdir()) == []


def test_root_is_removed_when_the_last_sandbox_goes():
    configure_sandboxes(prestart=0)  # (pre-started sandboxes keep the root until exit or cleanup_all)
    box = get_sandbox("t")
    root = box.workdir.parent
    assert root.parent == Path(tempfile.gettempdir()).resolve()
    box.cleanup()
    from hermes_envs.tools.backends import _workers

    _workers.flush()  # the janitor removes it, after the task's folder
    assert not root.exists()


def test_cleanup_never_waits_for_the_janitor_under_the_manager_lock():
    """The last sandbox's cleanup (on the event loop in score_rollout) queues the root's removal instead of
    waiting, under the manager lock, for the folders the janitor still has to remove (it held the loop 13-37 ms)."""
    from hermes_envs.tools.backends import _workers

    configure_sandboxes(prestart=0)
    box = get_sandbox("t")
    box.run("echo x > f")
    root = box.workdir.parent
    janitor_busy, release = threading.Event(), threading.Event()

    def slow_deletion() -> None:  # a deletion that takes as long as the test wants
        janitor_busy.set()
        release.wait(120)

    _workers.later(slow_deletion)
    assert janitor_busy.wait(60)
    try:
        done = threading.Thread(target=box.cleanup)
        done.start()
        done.join(
            60
        )  # (returns at once when cleanup does not wait; the bound only keeps a failure from hanging)
        assert not done.is_alive(), "cleanup waited for the janitor's queue"
        free = default_manager._lock.acquire(blocking=False)
        assert free, "cleanup returned but left the manager lock held"
        default_manager._lock.release()
        assert default_manager.active() == []
        assert root.exists()  # its removal waits behind the blocked deletion, on the janitor
    finally:
        release.set()
    _workers.flush()
    assert not root.exists()
    assert default_manager.root is None


# ------------------------------------------------------------------ async
async def test_arun_does_not_block_the_event_loop(backend):
    box = get_sandbox("t")
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    result = await box.arun("sleep 0.3; echo done")
    task.cancel()
    assert result == {"exit_code": 0, "output": "done\n"}
    assert ticks >= 5


async def test_cancelling_arun_kills_the_command(backend):
    box = get_sandbox("t")
    task = asyncio.create_task(box.arun("sleep 30 & echo $! > pid; wait", timeout=60))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await box.arun(
        "s=$(cut -d' ' -f3 /proc/$(cat pid)/stat 2>/dev/null); [ \"$s\" = S ] && echo alive || echo dead"
    )
    assert result["output"].endswith("dead\n")  # (bash may first report the killed background job)


async def test_concurrent_tasks_run_in_parallel(backend):
    boxes = [get_sandbox(f"p{i}") for i in range(4)]
    results = await asyncio.gather(*(b.arun(f"echo {i} > n.txt; cat n.txt") for i, b in enumerate(boxes)))
    assert [r["output"] for r in results] == [f"{i}\n" for i in range(4)]


def test_sigterm_removes_the_sandbox_files_and_still_kills_the_process(tmp_path) -> None:
    """A `serve` worker stopped with SIGTERM must not leave the rollouts' files in /tmp (atexit does not run)."""
    import signal as _signal
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    code = textwrap.dedent(
        """
        import sys, time
        from hermes_envs.tools import sandbox
        assert sandbox.install_sigterm_cleanup()
        box = sandbox.get_sandbox("sigterm-task")
        (box.workdir / "work.txt").write_text("the model's work")
        print(box.workdir, flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    workdir = Path(proc.stdout.readline().strip())
    assert (workdir / "work.txt").exists()
    proc.send_signal(_signal.SIGTERM)
    assert proc.wait(20) == -_signal.SIGTERM
    assert not workdir.exists() and not workdir.parent.exists()


def test_sigterm_cleanup_leaves_an_applications_own_handler_alone() -> None:
    import subprocess
    import sys

    code = (
        "import signal\nfrom hermes_envs.tools import sandbox\n"
        "signal.signal(signal.SIGTERM, lambda *a: None)\nprint(sandbox.install_sigterm_cleanup())\n"
        "print(signal.getsignal(signal.SIGTERM).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert out.split() == ["False", "<lambda>"]
