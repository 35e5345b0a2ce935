"""Red-team breaks of the sandbox (issue 12), each reproduced: secrets, links, special files, limits, reaping."""

from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from hermes_envs.tools import configure_sandboxes, get_sandbox, registry, sandbox_config
from hermes_envs.tools._task_files import FileTooLargeError, UnsafeFileError
from hermes_envs.tools.backends import _isolation, _procfs

NAMESPACED = bool(_isolation.pid_namespace_wrapper())
needs_namespace = pytest.mark.skipif(not NAMESPACED, reason="no PID namespace can be made on this machine")


def call(name: str, task: str = "t", **args) -> dict:
    return json.loads(registry.dispatch(name, args, task))


def _trainer(code: str, **env: str) -> subprocess.Popen[str]:
    """A trainer process (a fresh interpreter) that runs ``code`` with ``env`` in its start-up environment."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, **env),
    )


# ------------------------------------------------------------------ secrets
@needs_namespace
def test_commands_cannot_read_the_trainers_environment_through_proc():
    trainer = _trainer(
        """
        from hermes_envs.tools import get_sandbox
        box = get_sandbox("t")
        found = box.run("cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\\\\0' '\\\\n' | grep -c PLANTED")
        procs = box.run("ls /proc | grep -c '^[0-9]'")
        print(found["output"].strip(), procs["output"].strip(), flush=True)
        """,
        HERMES_TEST_KEY="sk-PLANTED-0123456789",
    )
    out, err = trainer.communicate(timeout=60)
    assert trainer.returncode == 0, err
    found, procs = out.split()
    assert found == "0"  # the trainer's key is nowhere in the sandbox's /proc
    assert int(procs) <= 6  # a /proc that shows only the sandbox's own processes


def test_missing_pid_namespace_is_said_once_loudly_with_the_fix(monkeypatch, caplog):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    _isolation.reset_probes()
    try:
        with caplog.at_level(logging.WARNING, logger="hermes_envs.tools.sandbox"):
            for task in ("a", "b"):
                assert get_sandbox(task).run("echo ok")["output"] == "ok\n"
        warnings = [r for r in caplog.records if "PID namespace" in r.getMessage()]
        assert len(warnings) == 1
        assert "/proc/$PPID/environ" in warnings[0].getMessage()
        assert "Fix: install bubblewrap" in warnings[0].getMessage()
    finally:
        monkeypatch.undo()
        _isolation.reset_probes()


def test_environment_is_an_allow_list(monkeypatch, backend):
    planted = {
        "GITHUB_PAT": "ghp_x",
        "OPENAI_KEY": "sk-x",
        "ANTHROPIC_KEY": "sk-ant",
        "DATABASE_URL": "postgres://u:p@h/db",
        "MYSQL_PWD": "pw",
        "SLACK_WEBHOOK_URL": "https://hooks.slack.com/x",
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
        "COOKIE": "session=1",
        "AUTH": "basic",
        "MY_DATA_DIR": "/data",
    }
    for key, value in planted.items():
        monkeypatch.setenv(key, value)
    configure_sandboxes(backend=backend, env_passthrough=["MY_DATA_*"], env={"TASK_MODE": "eval"})
    env = get_sandbox("t").run("env")["output"]
    for key in planted:
        if key != "MY_DATA_DIR":
            assert f"{key}=" not in env
    assert "MY_DATA_DIR=/data" in env and "TASK_MODE=eval" in env
    assert "PATH=" in env


# ------------------------------------------------------------------ links
def test_file_tools_do_not_follow_a_hard_link_out(scratch):
    configure_sandboxes(backend="local")
    outside = scratch / "secret.txt"
    outside.write_text("TOP SECRET\n")
    box = get_sandbox("t")
    os.link(outside, box.workdir / "link.txt")
    with pytest.raises(UnsafeFileError, match="hard links"):
        call("read_file", path="link.txt")
    with pytest.raises(UnsafeFileError, match="hard links"):
        call("write_file", path="link.txt", content="overwritten")
    with pytest.raises(UnsafeFileError, match="hard links"):
        call("patch", path="link.txt", old="TOP", new="NOT")
    assert call("search_files", pattern="SECRET")["matches"] == []
    assert outside.read_text() == "TOP SECRET\n"


def test_a_symlink_swapped_in_between_check_and_use_never_leaks(scratch, backend):
    outside = scratch / "secret.txt"
    outside.write_text("TOP SECRET")
    box = get_sandbox("t")
    name, spare = box.workdir / "f.txt", box.workdir / "g.txt"
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            spare.write_text("harmless")
            os.replace(spare, name)
            tmp = box.workdir / "l.tmp"
            try:
                os.symlink(outside, tmp)
            except FileExistsError:
                os.unlink(tmp)
                continue
            os.replace(tmp, name)

    flipper = threading.Thread(target=flip)
    flipper.start()
    leaked = 0
    try:
        for i in range(3000):
            try:
                if "SECRET" in box.read_text("f.txt"):
                    leaked += 1
            except (PermissionError, FileNotFoundError):
                pass
            if i % 6 == 0:
                try:
                    box.write_text("f.txt", "model wrote this")
                except (PermissionError, FileNotFoundError):
                    pass
    finally:
        stop.set()
        flipper.join()
    assert leaked == 0
    assert outside.read_text() == "TOP SECRET"


# ------------------------------------------------------------------ special and huge files
def test_read_file_on_a_fifo_is_refused_without_blocking(backend):
    box = get_sandbox("t")
    os.mkfifo(box.workdir / "pipe")
    done: list[BaseException] = []

    def read() -> None:
        try:
            call("read_file", path="pipe")
        except BaseException as exc:
            done.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader before failing
        with open(box.workdir / "pipe", "w"):
            pass
        pytest.fail("read_file blocked on a FIFO")
    assert isinstance(done[0], UnsafeFileError) and "FIFO" in str(done[0])
    with pytest.raises(UnsafeFileError):
        call("write_file", path="pipe", content="x")
    assert call("search_files", pattern="x")["matches"] == []


def test_read_file_on_a_2_gb_sparse_file_reads_only_what_it_shows(backend):
    box = get_sandbox("t")
    with open(box.workdir / "sparse.bin", "wb") as f:
        f.truncate(2 * 1024**3)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = call("read_file", path="sparse.bin")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert result["truncated"] is True
    assert f"of {2 * 1024**3} bytes" in result["content"]
    assert grown_mb < 200
    with pytest.raises(FileTooLargeError, match="max_file_size_mb"):
        box.read_bytes("sparse.bin")  # a whole-file read is refused rather than filling memory


# ------------------------------------------------------------------ limits
def test_default_limits_are_set_and_a_real_task_fits(backend):
    config = sandbox_config()
    assert (config.memory_mb, config.max_file_size_mb, config.max_processes) == (16384, 1024, 4096)
    box = get_sandbox("t")
    assert box.run("ulimit -v; ulimit -f; ulimit -u")["output"].split() == [
        str(16384 * 1024),
        str(1024 * 1024),
        "4096",
    ]
    work = f"{sys.executable} -c 'import json, sqlite3; x = bytearray(300 * 2**20); print(len(x) >> 20)'"
    assert box.run(work, timeout=60) == {"exit_code": 0, "output": "300\n"}


def test_file_tools_obey_the_file_size_limit(backend):
    configure_sandboxes(backend=backend, max_file_size_mb=1)
    with pytest.raises(FileTooLargeError, match="max_file_size_mb"):
        call("write_file", path="big.txt", content="x" * (2 * 1024 * 1024))
    assert not (get_sandbox("t").workdir / "big.txt").exists()


# ------------------------------------------------------------------ reaping
@pytest.mark.parametrize("namespace", [True, False], ids=["namespace", "no namespace"])
def test_setsid_children_do_not_survive_the_command_timeout(backend, namespace):
    configure_sandboxes(backend=backend, pid_namespace=namespace)
    box = get_sandbox("t")
    result = box.execute("setsid sh -c 'echo $$ > esc.pid; exec sleep 300' & sleep 30", timeout=1)
    assert result.timed_out
    alive = (
        's=$(cut -d" " -f3 /proc/$(cat esc.pid)/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && echo alive'
    )
    end = time.monotonic() + 60
    while box.run(alive + " || echo dead")["output"].strip().endswith("alive") and time.monotonic() < end:
        time.sleep(0.05)
    assert box.run(alive + " || echo dead")["output"].strip().endswith("dead")


@needs_namespace
@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "kill -9"])
def test_children_do_not_survive_the_trainer_dying(how):
    trainer = _trainer(
        """
        import time
        from hermes_envs.tools import get_sandbox
        for name in ("a", "b"):
            box = get_sandbox(name)
            box.run("sleep 300 & setsid sleep 301 & (setsid sh -c 'sleep 302' &)")
            print(box.backend.shell.marker.decode(), flush=True)
        time.sleep(120)
        """
    )
    markers = [trainer.stdout.readline().strip().encode() for _ in range(2)]
    assert all(markers)
    assert all(len(_procfs.pids_with_marker(m)) >= 3 for m in markers)
    trainer.send_signal(how)
    trainer.wait(30)
    end = time.monotonic() + 60
    while any(_procfs.pids_with_marker(m) for m in markers) and time.monotonic() < end:
        time.sleep(0.05)
    assert [_procfs.pids_with_marker(m) for m in markers] == [[], []]


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="the unshare route needs root"
)
@pytest.mark.slow
def test_without_bubblewrap_root_gets_the_same_isolation_from_unshare():
    trainer = _trainer(
        """
        import shutil, time
        real = shutil.which
        shutil.which = lambda name: None if name == "bwrap" else real(name)
        from hermes_envs.tools import get_sandbox
        from hermes_envs.tools.backends import _isolation
        assert "unshare" in " ".join(_isolation.pid_namespace_wrapper())
        box = get_sandbox("t")
        print(box.run("cat /proc/*/environ 2>/dev/null | tr '\\\\0' '\\\\n' | grep -c PLANTED")["output"].strip())
        box.execute("setsid sh -c 'echo $$ > esc.pid; exec sleep 300' & sleep 30", timeout=1)
        print(box.run("s=$(cut -d' ' -f3 /proc/$(cat esc.pid)/stat 2>/dev/null); echo ${s:-dead}")["output"].split()[-1])
        box.run("setsid sleep 303 &")
        print(box.backend.shell.marker.decode(), flush=True)
        time.sleep(120)
        """,
        HERMES_TEST_KEY="sk-PLANTED-0123456789",
    )
    found, escaped, marker = (trainer.stdout.readline().strip() for _ in range(3))
    assert (found, escaped) == ("0", "dead")
    assert _procfs.pids_with_marker(marker.encode())
    trainer.kill()
    trainer.wait(30)
    end = time.monotonic() + 60
    while _procfs.pids_with_marker(marker.encode()) and time.monotonic() < end:
        time.sleep(0.05)
    assert _procfs.pids_with_marker(marker.encode()) == []


def test_a_command_that_fills_the_disk_quota_is_killed_and_file_tools_refuse(backend):
    from hermes_envs.tools._disk_quota import DiskQuotaError, tree_usage

    configure_sandboxes(backend=backend, max_disk_mb=8)
    box = get_sandbox("t")
    assert sandbox_config().max_disk_mb == 8
    result = box.execute(
        "for i in $(seq 1 200); do head -c 1000000 /dev/urandom > f$i; sleep 0.02; done", timeout=60
    )
    assert result.exit_code == 137 and "disk quota" in result.output and not result.timed_out
    # killed while it ran, and then what it wrote past the quota was removed (issue 28): the folder fits again
    assert "Disk quota exceeded" in result.output and tree_usage(box.tree) <= 8 * 2**20
    box.write_bytes("full.bin", b"x" * (8 * 2**20 - tree_usage(box.tree) - 65536))  # nearly full
    with pytest.raises(DiskQuotaError, match="max_disk_mb"):
        call("write_file", path="more.txt", content="x" * 100_000)
    box.run("rm -f f* full.bin")
    assert call("write_file", path="more.txt", content="x" * 100_000)["bytes_written"] == 100_000
    assert box.run("echo still here")["output"] == "still here\n"


def test_a_task_over_its_quota_is_caught_while_another_process_frees_more_on_the_same_disk(tmp_path):
    # CI runs tests side by side on one file system: a neighbour removing a big file while the task wrote hid the
    # task's growth in a net shrink, and a 100 MB write over a 20 MB quota went through (exit 0 instead of 137)
    from hermes_envs.tools._disk_quota import DiskQuota

    root = tmp_path / "task"
    root.mkdir()
    neighbour = tmp_path / "neighbour.bin"
    with open(neighbour, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, 512 * 2**20)
    quota = DiskQuota(root, 20 * 2**20)
    since = time.time_ns()
    with open(root / "big.bin", "wb") as f:
        os.posix_fallocate(f.fileno(), 0, 100 * 2**20)
    neighbour.unlink()
    over = quota.enforce(since)
    assert over is not None and [parts for parts, _size in over[1]] == [["big.bin"]]
    assert not (root / "big.bin").exists()
