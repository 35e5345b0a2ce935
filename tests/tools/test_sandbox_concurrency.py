"""Many rollouts at once (issue 26): shells start in parallel, making a sandbox's folder never holds the lock that
a cleanup on the event loop takes, and a sandbox whose reward runs no command carries no fresh-shell machinery."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hermes_envs.errors import SandboxError
from hermes_envs.tools import SandboxManager
from hermes_envs.tools.backends._workers import spawn
from hermes_envs.tools.sandbox import verification_spares

LIVENESS = 30  # seconds: only a thread stuck behind another (the bug) ever waits that long


def test_two_shells_can_start_at_once_each_from_a_long_lived_spawner_thread():
    first_in, second_ran = threading.Event(), threading.Event()

    def first() -> threading.Thread:
        first_in.set()
        assert second_ran.wait(LIVENESS), "the second start waited for the first: one spawner thread"
        return threading.current_thread()

    def second() -> threading.Thread:
        second_ran.set()
        return threading.current_thread()

    with ThreadPoolExecutor(2) as callers:
        a = callers.submit(spawn, first)
        assert first_in.wait(LIVENESS)
        b = callers.submit(spawn, second)
        ta, tb = a.result(LIVENESS), b.result(LIVENESS)
    assert ta is not tb
    for thread in (ta, tb):  # the parent-death signal of a shell is tied to the thread that forked it
        assert thread.name.startswith("hermes-shell-spawner") and thread.is_alive()


class _SlowFolders(SandboxManager):
    """A manager whose sandbox folders are made slowly on the threads ``slow(thread)`` names."""

    def __init__(self, slow: Callable[[threading.Thread], bool]) -> None:
        super().__init__()
        self.slow = slow
        self.making, self.release = threading.Event(), threading.Event()

    def root_dir(self) -> Path:
        if self.slow(threading.current_thread()):
            self.making.set()
            assert self.release.wait(LIVENESS)
        return super().root_dir()


def _returns_while_a_folder_is_made(manager: _SlowFolders, call: Callable[[], object]) -> bool:
    assert manager.making.wait(LIVENESS)
    done = threading.Event()
    threading.Thread(target=lambda: (call(), done.set()), daemon=True).start()
    try:
        return done.wait(LIVENESS)
    finally:
        manager.release.set()


def test_a_cleanup_does_not_wait_while_a_new_task_s_folder_is_made(tmp_path):
    manager = _SlowFolders(lambda t: t.name == "new-task")
    manager.configure(prestart=0, root=tmp_path)
    try:
        manager.get("running").run("true")
        maker = threading.Thread(target=manager.get, args=("slow",), name="new-task", daemon=True)
        maker.start()
        assert _returns_while_a_folder_is_made(manager, lambda: manager.cleanup("running"))
        maker.join(LIVENESS)
        assert manager.active() == ["slow"]
    finally:
        manager.release.set()
        manager.cleanup_all()


def test_a_cleanup_does_not_wait_while_a_spare_s_folder_is_made(tmp_path):
    manager = _SlowFolders(lambda t: t.name.startswith("hermes-sandbox-prep"))
    manager.configure(prestart=1, root=tmp_path)
    try:
        manager.get("running")  # found no spare: a refill starts, its folder made slowly
        assert _returns_while_a_folder_is_made(manager, lambda: manager.cleanup("running"))
    finally:
        manager.release.set()
        manager.cleanup_all()
    assert manager.active() == []


def test_two_threads_asking_for_one_new_task_get_the_same_sandbox(tmp_path):
    # the folder is made outside the lock now: the thread that loses the race drops its own
    gate = threading.Barrier(2)
    manager = _SlowFolders(lambda t: False)
    manager.configure(prestart=0, root=tmp_path)
    try:

        def ask() -> object:
            gate.wait(LIVENESS)
            return manager.get("same")

        with ThreadPoolExecutor(2) as pool:
            boxes = [f.result(LIVENESS) for f in [pool.submit(ask), pool.submit(ask)]]
        assert boxes[0] is boxes[1] and manager.active() == ["same"]
        assert sorted(p.name for p in manager.root_dir().iterdir() if not p.name.startswith(".")) == [
            boxes[0].tree.name  # type: ignore[attr-defined]
        ]
    finally:
        manager.cleanup_all()


def test_a_sandbox_makes_its_fresh_shells_only_when_its_reward_runs_a_command(tmp_path):
    manager = SandboxManager()
    manager.configure(prestart=0, root=tmp_path)
    try:
        with verification_spares(False):
            box = manager.get("t")
            assert box.run("echo agent")["output"] == "agent\n"
            assert box.backend._fresh is None  # type: ignore[attr-defined]  # (read, not patched)
        assert box.run("echo reward", fresh=True)["output"] == "reward\n"
        assert box.backend._fresh is not None  # type: ignore[attr-defined]
    finally:
        manager.cleanup_all()


def test_fresh_shells_asked_for_after_the_sandbox_closed_refuse_commands(tmp_path):
    manager = SandboxManager()
    manager.configure(prestart=0, root=tmp_path)
    box = manager.get("t")
    box.run("true")
    backend = box.backend
    box.cleanup()
    with pytest.raises(SandboxError, match="closed"):
        backend.fresh.take()  # type: ignore[attr-defined]
    assert not backend.fresh.ready()  # type: ignore[attr-defined]
    manager.cleanup_all()
