"""Upstream's ``tools.terminal_tool`` task functions, on hermes-envs sandboxes (served as ``tools.terminal_tool``).

Upstream keys terminal state by ``task_id``; so do our sandboxes. What each call means here:

* ``register_task_env_overrides(task_id, overrides)`` keeps the overrides for the task (read them back with
  :func:`task_env_overrides`; a container backend reads ``docker_image`` / ``modal_image`` ... from there) and
  applies the one our sandbox has a meaning for: ``cwd``, the folder the task's commands start in. An existing
  host folder is used as is (upstream's local backend does the same); any other absolute path (``/app``) is a
  folder inside the task's own tree when the sandbox maps container-style paths, and is otherwise reported once.
* ``clear_task_env_overrides(task_id)`` forgets them; ``cleanup_vm(task_id)`` ends the task's sandbox
  (processes killed, files removed); ``cleanup_all_environments()`` ends every sandbox.
"""

from __future__ import annotations

import logging
import os
import shlex
import threading
from typing import Any

from hermes_envs.errors import ConfigError, SandboxError
from hermes_envs.tools.sandbox import active_sandboxes, cleanup_all_sandboxes, cleanup_sandbox, get_sandbox

__all__ = [
    "cleanup_all_environments",
    "cleanup_vm",
    "clear_task_env_overrides",
    "register_task_env_overrides",
    "task_env_overrides",
]

logger = logging.getLogger(__name__)

# Per-task state (keyed by task id, like the sandboxes), not a name table: a plain dict under a lock.
_overrides: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()
_warned: set[str] = set()


def register_task_env_overrides(task_id: str, overrides: dict[str, Any]) -> None:
    """Keep ``overrides`` for ``task_id`` (merged over earlier ones) and start its commands in ``cwd``."""
    if not isinstance(task_id, str) or not task_id:
        raise ConfigError(
            f"task_id should be a non-empty str; got {task_id!r}. Fix: pass the rollout's task_id."
        )
    if not isinstance(overrides, dict):
        raise ConfigError(
            f"overrides should be a dict such as {{'cwd': '/app'}}; got {type(overrides).__name__}. "
            "Fix: pass a dict."
        )
    with _lock:
        _overrides.setdefault(task_id, {}).update(overrides)
    cwd = overrides.get("cwd")
    if cwd:
        _start_in(task_id, str(cwd))


def _start_in(task_id: str, cwd: str) -> None:
    box = get_sandbox(task_id)
    assert box is not None
    if os.path.isabs(cwd) and os.path.isdir(cwd) and box.config.backend == "local":
        target = cwd  # a host folder the env prepared (upstream's local backend honours it the same way)
    else:
        try:
            path = box.resolve_path(cwd)
        except (SandboxError, PermissionError, ValueError) as exc:
            if cwd not in _warned:
                _warned.add(cwd)
                logger.warning(
                    "cwd override %r of task %s has no place in this sandbox (%s); commands start in the task's "
                    "working directory instead.",
                    cwd,
                    task_id,
                    exc,
                )
            return
        path.mkdir(parents=True, exist_ok=True)
        target = str(path)
    box.run(f"cd {shlex.quote(target)}", timeout=30)


def task_env_overrides(task_id: str) -> dict[str, Any]:
    """A copy of the overrides registered for ``task_id`` (empty when none)."""
    with _lock:
        return dict(_overrides.get(task_id, {}))


def clear_task_env_overrides(task_id: str) -> None:
    """Forget the overrides of ``task_id`` (no-op when it has none)."""
    with _lock:
        _overrides.pop(task_id, None)


def cleanup_vm(task_id: str) -> None:
    """End the sandbox of ``task_id``: its processes are killed and its files removed (no-op when none)."""
    cleanup_sandbox(task_id)


def cleanup_all_environments() -> int:
    """End every sandbox of this process; returns how many there were."""
    count = len(active_sandboxes())
    cleanup_all_sandboxes()
    return count
