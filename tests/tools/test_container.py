"""Container-style sandboxes: every upstream backend name is accepted, absolute paths are the task's own."""

from __future__ import annotations

import logging
import os
import shutil

import pytest

from hermes_envs.errors import PathEscapeError
from hermes_envs.tools import ToolContext, available_backends, configure_sandboxes, get_sandbox
from hermes_envs.tools.backends import _isolation, container, docker

UPSTREAM = ["local", "docker", "singularity", "modal", "daytona", "vercel_sandbox", "ssh"]
HAVE_BWRAP = _isolation.bwrap_usable() is not None


def _hide(monkeypatch, *names: str) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name in names else real(name))
    _isolation.reset_probes()


@pytest.fixture(params=["bwrap", "chroot", "mapped"])
def container_mode(request, monkeypatch):
    """The three ways the task's root is made: bubblewrap; as root, unshare + chroot; path mapping only."""
    if request.param == "bwrap" and not HAVE_BWRAP:
        pytest.skip("bubblewrap cannot make namespaces here")
    if request.param == "chroot":
        _hide(monkeypatch, "bwrap")
        if _isolation.unshare_usable() is None:
            pytest.skip("unshare + chroot needs root")
    if request.param == "mapped":
        _hide(monkeypatch, "bwrap", "unshare")
    configure_sandboxes(backend="container")
    yield request.param
    monkeypatch.undo()
    _isolation.reset_probes()


def test_every_upstream_backend_name_is_accepted():
    assert set(UPSTREAM) <= set(available_backends())
    for name in UPSTREAM:
        configure_sandboxes(backend=name)
        assert get_sandbox(f"t-{name}").run("echo ok")["output"] == "ok\n"


def test_a_stand_in_is_said_once_naming_both_backends(caplog):
    container._warned.discard("modal")
    with caplog.at_level(logging.WARNING, logger="hermes_envs.tools.sandbox"):
        configure_sandboxes(backend="modal")
        configure_sandboxes(backend="modal")
        get_sandbox("t").run("true")
    said = [r.getMessage() for r in caplog.records if "stands in" in r.getMessage()]
    assert len(said) == 1
    assert "'modal'" in said[0] and "'container'" in said[0] and "Modal" in said[0]


@pytest.mark.skipif(docker.docker_answers(), reason="a Docker daemon answers here")
def test_docker_without_a_daemon_runs_in_the_container_sandbox(caplog):
    container._warned.discard("docker")
    with caplog.at_level(logging.WARNING, logger="hermes_envs.tools.sandbox"):
        configure_sandboxes(backend="docker")
    assert any("no Docker daemon" in r.getMessage() for r in caplog.records)
    box = get_sandbox("t")
    assert box.backend_class is container.ContainerBackend
    assert box.workdir.name == "workspace"


def test_absolute_paths_resolve_inside_the_tasks_own_root(container_mode, scratch):
    (scratch / "tests").mkdir()
    (scratch / "tests" / "test.sh").write_text(
        "echo from-tests; test -f /workspace/solution.py && echo solved\n"
    )
    ctx = ToolContext("t")
    box = ctx.sandbox
    ctx.write_file("/workspace/solution.py", "print(42)\n")
    assert ctx.read_file("solution.py") == "print(42)\n"  # /workspace is the working directory
    assert ctx.upload_dir(scratch / "tests", "/tests") == [{"exit_code": 0, "output": ""}]
    assert (box.tree / "tests" / "test.sh").is_file()
    ctx.write_file("/logs/verifier/reward.txt", "1\n")
    assert ctx.download_dir("/logs/verifier", scratch / "out") == [{"success": True, "bytes": 2}]
    assert (scratch / "out" / "reward.txt").read_text() == "1\n"
    for host in ("/tests/test.sh", "/logs/verifier/reward.txt", "/workspace/solution.py"):
        assert not os.path.exists(host) or host.startswith(str(box.tree))  # never onto the host
    with pytest.raises(FileNotFoundError):
        ctx.read_file("/etc/hostname")  # the host's files are not the task's
    assert ctx.read_file("/../../workspace/solution.py") == "print(42)\n"  # as in a container: /.. is /
    assert box.backend.mode == container_mode
    if container_mode != "mapped":  # commands see the same tree
        assert ctx.terminal("pwd; bash /tests/test.sh; cat /logs/verifier/reward.txt") == {
            "exit_code": 0,
            "output": "/workspace\nfrom-tests\nsolved\n1\n",
        }
        ctx.terminal(
            "mkdir -p /logs/agent && echo done > /logs/agent/x.txt; ln -s /workspace/solution.py /tmp/s"
        )
        assert ctx.read_file("/logs/agent/x.txt") == "done\n"
        assert ctx.read_file("/tmp/s") == "print(42)\n"  # an absolute symlink counts from the task's root
        assert box.tree.name not in ctx.terminal("ls /tmp")["output"]  # other tasks' folders are not there
    ctx.cleanup()


def test_two_container_tasks_have_separate_roots(container_mode):
    a, b = get_sandbox("a"), get_sandbox("b")
    a.write_text("/tests/t.txt", "a")
    with pytest.raises(FileNotFoundError):
        b.read_text("/tests/t.txt")
    with pytest.raises(FileNotFoundError):
        a.read_text(
            str(b.tree / "tests" / "t.txt")
        )  # another task's host path is just a path in a's own root
    assert not (a.tree / "tests" / "t.txt").read_text() == "b"


def test_local_backend_still_refuses_absolute_paths_outside_the_task():
    box = get_sandbox("t")
    with pytest.raises(PathEscapeError, match="outside this task's working directory"):
        box.write_text("/tests/test.sh", "x")


@pytest.mark.skipif(not docker.docker_answers(), reason="no Docker daemon answers here")
def test_docker_backend_runs_commands_in_a_container():
    configure_sandboxes(backend="docker")
    ctx = ToolContext("t")
    ctx.write_file("/tests/test.sh", "echo in-docker\n")
    assert ctx.terminal("cd /workspace && bash /tests/test.sh && cat /proc/1/cgroup >/dev/null; pwd") == {
        "exit_code": 0,
        "output": "in-docker\n/workspace\n",
    }
    assert ctx.terminal("sleep 30", timeout=1)["exit_code"] == 124
    ctx.cleanup()
