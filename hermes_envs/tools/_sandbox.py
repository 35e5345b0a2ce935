"""One task's sandbox: its private folder (:class:`~hermes_envs.tools._task_files.TaskFiles`) and its backend.

Sandboxes are made and kept by a :class:`~hermes_envs.tools._manager.SandboxManager`; see :mod:`.sandbox`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from hermes_envs.errors import SandboxError

from ._disk_quota import DiskQuota
from ._sandbox_config import SandboxConfig, sandbox_environment
from ._task_files import TaskFiles
from .backends import CommandResult, SandboxBackend
from .backends._workers import later

__all__ = ["Sandbox", "SandboxOwner", "fresh_shells"]

#: True while the reward's ToolContext runs a tool: its commands go to fresh shells (see :func:`fresh_shells`).
_FRESH: contextvars.ContextVar[bool] = contextvars.ContextVar("hermes_fresh_shells", default=False)


@contextlib.contextmanager
def fresh_shells() -> Iterator[None]:
    """Within the block, :meth:`Sandbox.execute` runs each command in a shell of its own that no earlier command
    touched (:meth:`SandboxBackend.run_fresh`) unless the caller asks for the task's shell by name."""
    token = _FRESH.set(True)
    try:
        yield
    finally:
        _FRESH.reset(token)


class SandboxOwner(Protocol):
    """What a sandbox needs from the manager that made it (:class:`~hermes_envs.tools._manager.SandboxManager`)."""

    @property
    def config(self) -> SandboxConfig: ...

    def backend_class_for(self, config: SandboxConfig) -> type[SandboxBackend]: ...

    def root_dir(self) -> Path: ...

    async def run_off_loop(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...

    def _forget(self, box: Sandbox) -> None: ...


def _safe_name(task_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)[:40].strip(".") or "task"


class Sandbox:
    """One task's private folder plus a backend that runs its commands.

    ``tree`` is the task's own root folder; ``workdir`` (where commands start, and what relative paths are relative
    to) is ``tree`` itself, or ``tree/workspace`` for container-style backends, where absolute paths such as
    ``/tests/test.sh`` resolve inside ``tree``. Thread-safe: commands of one task run one at a time, in order;
    different tasks run in parallel.
    """

    def __init__(
        self,
        task_id: str,
        config: SandboxConfig | None = None,
        *,
        manager: SandboxOwner,
        backend_class: type[SandboxBackend] | None = None,
    ):
        self.manager = manager
        self.task_id = task_id
        self.config = config or self.manager.config
        self.backend_class = backend_class or self.manager.backend_class_for(self.config)
        self.tree = Path(
            tempfile.mkdtemp(prefix=_safe_name(task_id) + "-", dir=self.manager.root_dir())
        ).resolve()
        workdir = self.tree / "workspace" if self.backend_class.container_paths else self.tree
        workdir.mkdir(exist_ok=True)
        self.workdir: Path = workdir
        self.files = TaskFiles(
            self.tree,
            self.workdir,
            container_paths=self.backend_class.container_paths,
            links_confined=lambda: bool(self.backend.links_confined),
        )
        limit = self.config.max_disk_mb
        self.quota = DiskQuota(self.tree, limit * 1024 * 1024) if limit is not None else None
        self.created_at = time.monotonic()
        self.last_used = self.created_at
        self.closed = False
        self._run_lock = threading.Lock()
        self._backend: SandboxBackend | None = None
        self._backend_lock = threading.Lock()
        #: where fresh shells (the reward's commands) start, as the task's commands name it; None: the workdir.
        #: Set by the harness (a task's cwd override), never by what the agent runs.
        self.start_dir: str | None = None
        #: called once after the first command (or at cleanup if none ran): the manager's refill of its spares
        self.after_first_command: Callable[[], None] | None = None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<Sandbox task_id={self.task_id!r} workdir={str(self.workdir)!r} {state}>"

    # ---------------------------------------------------------------- commands
    @property
    def backend(self) -> SandboxBackend:
        with self._backend_lock:
            if self.closed:
                raise SandboxError(
                    f"the sandbox of task {self.task_id!r} was cleaned up; got a command after cleanup. "
                    "Fix: call get_sandbox(task_id) again for a fresh sandbox, or clean up only at the end."
                )
            if self._backend is None:
                self._backend = self.backend_class(self.workdir, self.config, self._environment())
                shell = getattr(self._backend, "shell", None)
                if shell is not None and self.quota is not None:
                    shell.watch = self.quota.check
            return self._backend

    @property
    def spawned_in(self) -> str | None:
        """The network namespace this sandbox's shell was forked in (``None``: no process of it lives yet)."""
        backend = self._backend
        return backend.spawned_in if backend is not None else None

    @property
    def busy(self) -> bool:
        """True while a command runs."""
        return self._run_lock.locked()

    def _environment(self) -> dict[str, str]:
        env = sandbox_environment(self.config)
        env.update(
            HOME=str(self.workdir),
            PWD=str(self.workdir),
            TMPDIR=str(self.workdir),
            HISTFILE="/dev/null",
            HERMES_TASK_ID=self.task_id,
            PAGER="cat",
            GIT_PAGER="cat",
        )
        return env

    def adopt(self, task_id: str) -> None:
        """Hand this (pre-started) sandbox to ``task_id``: its commands see that id from the first one on."""
        self.task_id = task_id
        if self._backend is not None:
            self._backend.export({"HERMES_TASK_ID": task_id})
        self.last_used = time.monotonic()

    def _timeout(self, timeout: float | None) -> float:
        if timeout is None:
            return float(self.config.timeout)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"timeout should be a positive number of seconds; got {timeout!r}.")
        return float(min(timeout, self.config.max_timeout))

    def execute(
        self, command: str, timeout: float | None = None, *, fresh: bool | None = None
    ) -> CommandResult:
        """Run ``command`` and return the full :class:`CommandResult`: in the task's shell, or with ``fresh`` in a
        shell started for it that the task's commands never touched (default: fresh inside :func:`fresh_shells`,
        i.e. when the reward's ToolContext runs it)."""
        if not isinstance(command, str):
            raise TypeError(f"command should be a str; got {type(command).__name__}.")
        if "\x00" in command:
            raise ValueError("command should not contain NUL bytes.")
        seconds = self._timeout(timeout)
        if fresh is None:
            fresh = _FRESH.get()
        if fresh and self.start_dir is not None:
            command = f"cd -- {shlex.quote(self.start_dir)} || exit 1\n{command}"
        with self._run_lock:
            self.last_used = time.monotonic()
            try:
                backend = self.backend
                since = time.time_ns()
                result = backend.run_fresh(command, seconds) if fresh else backend.run(command, seconds)
                if self.quota is not None:
                    self._enforce_quota(result, since, measure=bool(fresh))
                return result
            finally:
                self.last_used = time.monotonic()
                self._first_done()

    def _enforce_quota(self, result: CommandResult, since: int, measure: bool = False) -> None:
        """Whatever the command's length: when it left the folder over ``max_disk_mb``, remove what it wrote (see
        :meth:`DiskQuota.enforce`) and say so in ``result`` (exit code 137, as for a command the watch killed)."""
        assert self.quota is not None
        try:
            over = self.quota.enforce(since, measure=measure)
        except OSError:  # the folder is being removed (cleanup while the command ran)
            return
        if over is None:
            return
        usage, removed = over
        names = ", ".join(
            f"{self.files.display(parts)} ({size / 2**20:.0f} MB)" for parts, size in removed[:10]
        )
        more = f" and {len(removed) - 10} more" if len(removed) > 10 else ""
        gone = (
            f"removed what it wrote: {names}{more}" if removed else "it wrote nothing that could be removed"
        )
        result.exit_code = 137
        result.output += (
            f"\n[Disk quota exceeded: the command took the task's files to {usage / 2**20:.0f} MB, over its quota of "
            f"{self.quota.limit / 2**20:.0f} MB (max_disk_mb); {gone}. Write less, or remove files the task no "
            "longer needs (exit code 137).]"
        )

    def _first_done(self) -> None:
        """Run the :attr:`after_first_command` hook once (the manager also runs it when a task ends without a
        command)."""
        hook, self.after_first_command = self.after_first_command, None
        if hook is not None:
            hook()

    def run(self, command: str, timeout: float | None = None, *, fresh: bool | None = None) -> dict:
        """Run ``command``; returns ``{"exit_code": int, "output": str}`` (stdout and stderr merged, capped).

        A command that runs past ``timeout`` seconds (default: the configured terminal timeout) has its processes
        killed, gets exit code 124 and a note at the end of the output; the shell itself survives. ``fresh``: as
        :meth:`execute`.
        """
        result = self.execute(command, timeout, fresh=fresh)
        return {"exit_code": result.exit_code, "output": result.output}

    async def arun(self, command: str, timeout: float | None = None, *, fresh: bool | None = None) -> dict:
        """Awaitable :meth:`run` that runs off the event loop; cancelling it kills the running command."""
        try:
            return await self.manager.run_off_loop(self.run, command, timeout, fresh=fresh)
        except asyncio.CancelledError:
            self.interrupt()
            raise

    def interrupt(self) -> None:
        """Kill the command running now (if any); the shell and the files stay."""
        backend = self._backend
        if backend is not None:
            backend.interrupt()

    # ---------------------------------------------------------------- files
    def resolve_path(self, path: str | os.PathLike[str]) -> Path:
        """The host path ``path`` names (relative to the workdir; absolute inside the task's tree).

        Raises PathEscapeError for paths that leave the task's folder through ``..``, an absolute path or a symlink.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path should be a str; got {type(path).__name__}.")
        return self.files.resolve(path)

    def shell_path(self, path: str | os.PathLike[str]) -> str:
        """The absolute path the task's commands use for ``path`` (resolved as the file tools do), whatever folder
        the shell has moved to (``/workspace/...`` in a container-style sandbox, the host path on ``local``)."""
        return self.backend.shell_path(self.resolve_path(path))

    def relative(self, path: Path) -> str:
        """How ``path`` (a host path in this sandbox) is shown to the model."""
        return self.files.display(list(Path(path).relative_to(self.tree).parts))

    def read_bytes(self, path: str | os.PathLike[str], limit: int | None = None) -> bytes:
        """The content of a regular file (at most ``limit`` bytes; default: up to ``max_file_size_mb``)."""
        return self.read_bounded(path, limit)[0]

    def read_bounded(self, path: str | os.PathLike[str], limit: int | None = None) -> tuple[bytes, int]:
        """(at most ``limit`` bytes of the file, its full size); never blocks and never reads more than ``limit``."""
        self._touch()
        if limit is None:
            return self.files.read(path, None, whole_max=self.config.max_file_bytes)
        return self.files.read(path, limit)

    def read_text(self, path: str | os.PathLike[str]) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def write_bytes(self, path: str | os.PathLike[str], data: bytes) -> Path:
        """Replace or create a file (parents made); never writes through a link. Returns its host path."""
        self._touch()
        if self.quota is not None:
            self.quota.allow(len(data), os.fspath(path))
        parts = self.files.write(path, bytes(data), max_bytes=self.config.max_file_bytes)
        return self.files.host_path(parts)

    def write_text(self, path: str | os.PathLike[str], content: str) -> None:
        if not isinstance(content, str):
            raise TypeError(f"content should be a str; got {type(content).__name__}.")
        self.write_bytes(path, content.encode("utf-8"))

    def _touch(self) -> None:
        if self.closed:
            raise SandboxError(
                f"the sandbox of task {self.task_id!r} was cleaned up; got a file access after cleanup. "
                "Fix: call get_sandbox(task_id) again for a fresh sandbox, or clean up only at the end."
            )
        self.last_used = time.monotonic()

    # ---------------------------------------------------------------- lifecycle
    def cleanup(self) -> None:
        """Kill every process of this sandbox and remove its folder. Idempotent."""
        with self._backend_lock:
            if self.closed:
                return
            self.closed = True
            backend, self._backend = self._backend, None
        try:
            if backend is not None:
                backend.close()
        finally:
            _discard_tree(self.tree)
            self.manager._forget(self)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def _discard_tree(path: Path) -> None:
    """Take the task's folder out of sight now (one rename to a hidden name beside it) and remove it on the janitor
    thread, so a cleanup does not walk the tree on the caller's thread; removed here when the rename fails."""
    trash = path.with_name(f".trash-{path.name}")
    try:
        os.rename(path, trash)
    except OSError:
        _remove_tree(path)
        return
    later(lambda: _remove_tree(trash))


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():  # read-only subfolders made by the command: make writable and retry
        for dirpath, dirnames, _ in os.walk(path):
            for d in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, d), 0o700)
                except OSError:
                    pass
        shutil.rmtree(path, ignore_errors=True)
