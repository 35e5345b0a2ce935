"""Upstream's ``tools.terminal_tool`` task functions, on hermes-envs sandboxes (served as ``tools.terminal_tool``).

Upstream keys terminal state by ``task_id``; so do our sandboxes. What each call means here:

* ``register_task_env_overrides(task_id, overrides)`` keeps the overrides for the task (read them back with
  :func:`task_env_overrides`; a container backend reads ``docker_image`` / ``modal_image`` ... from there) and
  applies the one our sandbox has a meaning for: ``cwd``, the folder the task's commands start in. An existing
  host folder is used as is on ``local`` (upstream's local backend does the same); any other absolute path
  (``/app``) is a folder inside the task's own tree when the sandbox maps container-style paths, and is otherwise
  reported once. In a container-style sandbox a host folder that the env mounts the way upstream's Docker backend
  is told to (``TERMINAL_DOCKER_VOLUMES``, a JSON list of ``"host:container"``) is copied into the task's tree at
  its container path when the task starts in it, so the files the env seeded there are the task's; a host folder
  not mounted that way starts empty (said once).
* ``clear_task_env_overrides(task_id)`` forgets them; ``cleanup_vm(task_id)`` ends the task's sandbox
  (processes killed, files removed); ``cleanup_all_environments()`` ends every sandbox.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import threading
from pathlib import Path
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
    host_folder = os.path.isabs(cwd) and os.path.isdir(cwd)
    if host_folder and box.config.backend == "local":
        target = cwd  # a host folder the env prepared (upstream's local backend honours it the same way)
    else:
        if host_folder and box.backend_class.container_paths:
            cwd = _seed_from_volume(box, cwd)
        try:
            parts = box.files.mkdir(cwd)  # parents made inside the task's tree
        except (SandboxError, OSError, ValueError) as exc:
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
        path = box.files.host_path(parts)
        if box.backend_class.container_paths:
            box.files.wd_parts = list(
                parts
            )  # relative file-tool paths start where commands do, as upstream's
        # a container-style shell sees the task's tree as its "/" (unless bubblewrap is missing: then the host path)
        native = box.backend_class.container_paths and getattr(box.backend, "isolated", True)
        target = cwd if native else str(path)
    box.start_dir = target  # the reward's fresh shells start there too
    box.run(f"cd {shlex.quote(target)}", timeout=30)


def _docker_volumes() -> list[tuple[str, str]]:
    """``(host, container)`` pairs of ``TERMINAL_DOCKER_VOLUMES`` (upstream's JSON list of ``"host:container"``)."""
    try:
        specs = json.loads(os.environ.get("TERMINAL_DOCKER_VOLUMES") or "[]")
    except json.JSONDecodeError:
        return []
    pairs = []
    for spec in specs if isinstance(specs, list) else []:
        host, _, container = str(spec).partition(":")
        if host and container.startswith("/"):
            pairs.append((os.path.normpath(host), os.path.normpath(container.split(":")[0])))
    return pairs


def _seed_from_volume(box: Any, cwd: str) -> str:
    """Copy the host folder ``cwd`` into the task's tree when a volume mounts it; the container path to start in."""
    folder = os.path.normpath(cwd)
    for host, container in _docker_volumes():
        if folder == host or folder.startswith(host + os.sep):
            inside = container + folder[len(host) :]
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file() and not path.is_symlink():
                    box.write_bytes(inside + "/" + path.relative_to(folder).as_posix(), path.read_bytes())
            return inside
    if folder not in _warned:
        _warned.add(folder)
        logger.warning(
            "cwd override %r of task %s is a host folder; terminal_backend %r gives each task its own root, so the "
            "task starts in an empty %r of its own. Fix: list it in TERMINAL_DOCKER_VOLUMES as '%s:%s' (as upstream's "
            "Docker backend needs) to have its files copied in, or use terminal_backend 'local'.",
            cwd,
            box.task_id,
            box.config.backend,
            folder,
            folder,
            folder,
        )
    return folder


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
