"""The background threads of the sandbox layer: the spawners that fork every shell, the janitor, and
:class:`DaemonPool` (the janitor's kind, also the manager's preparers of spare sandboxes).

Shells are forked from a few long-lived threads (:func:`spawn`): the parent-death signal that kills a sandbox with
the trainer is tied to the thread that forked it, and a worker thread of a pool may exit; a spawner thread lives
until the interpreter exits. Several, because a fork waits for the child's exec and, under load, for the GIL: with
one spawner, 64 rollouts starting at once queued ~50 ms each (median) behind each other's forks.

The janitor (:func:`later`) does the slow half of a cleanup after the processes were killed: waiting for the
wrapper process to exit, closing its pipes, removing the task's files (already renamed out of sight). A rollout's
cleanup then costs a few system calls on its own thread (the event loop, in an env's ``score_rollout``) instead of
a wait and a tree walk. :func:`flush` waits for everything queued (``cleanup_all_sandboxes``, exit, tests).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import thread as _futures_thread
from typing import Any

__all__ = ["SPAWNERS", "DaemonPool", "flush", "later", "spawn", "spawner_gone", "start_later"]

log = logging.getLogger("hermes_envs.tools.sandbox")

#: Threads forking shells at once (each lives until the interpreter exits, see above).
SPAWNERS = 4
_spawner = ThreadPoolExecutor(max_workers=SPAWNERS, thread_name_prefix="hermes-shell-spawner")


def spawner_gone() -> bool:
    """True once the interpreter's exit has stopped the spawner thread: the shells it forked die with it (their
    parent-death signal), so a shell pre-started before is no use to a task started in an ``atexit`` hook."""
    return bool(getattr(_spawner, "_shutdown", False)) or bool(getattr(_futures_thread, "_shutdown", False))


def spawn(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` (which forks) in a spawner thread and return its result."""
    if threading.current_thread().name.startswith("hermes-shell-spawner"):
        return fn(*args, **kwargs)
    try:
        future = _spawner.submit(fn, *args, **kwargs)
    except RuntimeError:  # the interpreter is shutting down: fork from here
        return fn(*args, **kwargs)
    return future.result()


class DaemonPool:
    """A few daemon threads running queued jobs, started on first use.

    Not a ThreadPoolExecutor: its threads are joined at interpreter exit after running every job still queued (a
    backlog of pre-starts would hold the exit up), and it has no "wait until the queue is done" (:meth:`join`).
    """

    def __init__(self, name: str, size: int = 1) -> None:
        self.name = name
        self.size = size
        self._jobs: queue.Queue[Callable[[], Any]] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], Any]) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            if len(self._threads) < min(self.size, self._jobs.qsize() + 1 + self._busy()):
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True
                )
                thread.start()
                self._threads.append(thread)
        self._jobs.put(job)

    def _busy(self) -> int:
        return self._jobs.unfinished_tasks - self._jobs.qsize()

    def _work(self) -> None:
        while True:
            self._run(self._jobs.get())

    def _run(self, job: Callable[[], Any]) -> None:
        try:
            job()
        except Exception:  # pragma: no cover - best effort, like the work it does
            log.exception("%s: a background job failed", self.name)
        finally:
            self._jobs.task_done()

    def ours(self) -> bool:
        return threading.current_thread() in self._threads

    def join(self) -> None:
        """Wait until every job queued so far (and those they queue) is done."""
        if self.ours():  # a job waiting for the queue would wait for itself
            return
        with self._lock:
            alive = any(t.is_alive() for t in self._threads)
        if not alive:  # never started (or gone at shutdown): run them here
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    return
                self._run(job)
        self._jobs.join()


_janitor = DaemonPool("hermes-sandbox-janitor")
# Threads starting the reward's spare fresh shells (:mod:`._fresh`): most of a start is waiting (exec, namespaces).
_starter = DaemonPool("hermes-fresh-shells", 2)


def later(job: Callable[[], Any]) -> None:
    """Run ``job`` on the janitor thread."""
    _janitor.submit(job)


def start_later(job: Callable[[], Any]) -> None:
    """Run ``job`` (a spare fresh shell's start) on a starter thread."""
    _starter.submit(job)


def flush() -> None:
    """Wait until every spare start queued so far has ended (a spare of a closed sandbox is closed by then), then
    until every job queued for the janitor so far (and those they queue) is done."""
    _starter.join()
    _janitor.join()
