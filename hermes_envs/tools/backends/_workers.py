"""The two long-lived threads of the sandbox layer: the spawner that forks every shell, and the janitor.

Shells are forked from one long-lived thread (:func:`spawn`): the parent-death signal that kills a sandbox with the
trainer is tied to the thread that forked it, and a worker thread of a pool may exit.

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
from typing import Any

__all__ = ["flush", "later", "spawn", "spawn_later"]

log = logging.getLogger("hermes_envs.tools.sandbox")

_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hermes-shell-spawner")


def spawn(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` (which forks) in the spawner thread and return its result."""
    if threading.current_thread().name.startswith("hermes-shell-spawner"):
        return fn(*args, **kwargs)
    try:
        future = _spawner.submit(fn, *args, **kwargs)
    except RuntimeError:  # the interpreter is shutting down: fork from here
        return fn(*args, **kwargs)
    return future.result()


def spawn_later(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """Queue ``fn`` on the spawner thread; dropped at shutdown."""
    try:
        _spawner.submit(fn, *args, **kwargs)
    except RuntimeError:
        pass


# A plain queue and thread rather than a ThreadPoolExecutor: flush() needs Queue.join (wait until every queued
# job is done), which an executor does not offer.
_jobs: queue.Queue[Callable[[], Any]] = queue.Queue()
_janitor: threading.Thread | None = None
_janitor_lock = threading.Lock()


def _work() -> None:
    while True:
        job = _jobs.get()
        try:
            job()
        except Exception:  # pragma: no cover - best effort, like the cleanup it finishes
            log.exception("finishing a sandbox cleanup failed")
        finally:
            _jobs.task_done()


def later(job: Callable[[], Any]) -> None:
    """Run ``job`` on the janitor thread (started on first use)."""
    global _janitor
    with _janitor_lock:
        if _janitor is None or not _janitor.is_alive():
            _janitor = threading.Thread(target=_work, name="hermes-sandbox-janitor", daemon=True)
            _janitor.start()
    _jobs.put(job)


def flush() -> None:
    """Wait until every job queued so far (and those they queue) is done."""
    if threading.current_thread() is _janitor:  # a job flushing would wait for itself
        return
    if _janitor is None or not _janitor.is_alive():  # never started (or gone at shutdown): run them here
        while True:
            try:
                job = _jobs.get_nowait()
            except queue.Empty:
                return
            try:
                job()
            except Exception:  # pragma: no cover
                log.exception("finishing a sandbox cleanup failed")
            finally:
                _jobs.task_done()
    _jobs.join()
