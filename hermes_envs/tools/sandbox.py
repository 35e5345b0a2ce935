"""Per-task sandboxes: a private working directory and a persistent shell for every ``task_id``.

A rollout's tools and the reward's :class:`~hermes_envs.tools.context.ToolContext` share one :class:`Sandbox`, looked
up by ``task_id`` (:func:`get_sandbox`). The sandbox is created lazily, owns a private folder under one root temporary
folder, runs commands through a backend (:mod:`hermes_envs.tools.backends`) and is removed by :meth:`Sandbox.cleanup`
(rollout end), by the idle reaper (``terminal_lifetime``) or at interpreter exit.

What the local backend does and does not protect against is written down in ``docs/sandbox.md``.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from hermes_envs.errors import ConfigError, PathEscapeError, SandboxError

from .backends import BACKENDS, CommandResult, SandboxBackend, available_backends

__all__ = [
    "Sandbox",
    "SandboxConfig",
    "active_sandboxes",
    "cleanup_all_sandboxes",
    "cleanup_sandbox",
    "configure_sandboxes",
    "get_sandbox",
    "sandbox_config",
    "scrubbed_environment",
]

log = logging.getLogger(__name__)

# Environment variables whose NAME matches this are never passed to sandboxed commands.
SECRET_NAME = re.compile(
    r"(API_?KEY|_TOKEN$|^TOKEN$|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|ACCESS_KEY|_AUTH$|AUTH_TOKEN)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class SandboxConfig:
    """Settings shared by every sandbox created after :func:`configure_sandboxes`.

    ``timeout`` is the default per-command timeout in seconds, ``max_timeout`` the largest one a caller may ask for;
    ``lifetime`` is how long (seconds) a sandbox may stay idle before the reaper cleans it up. Resource limits apply
    to every process the sandbox starts (``None`` = no limit): ``cpu_seconds`` (CPU time per process),
    ``memory_mb`` (address space per process), ``max_processes`` (RLIMIT_NPROC; not enforced for root),
    ``max_file_size_mb`` (largest file a command may write). ``max_output_bytes`` caps the output kept per command
    (head and tail are kept; the cut is stated in the output).
    """

    backend: str = "local"
    timeout: float = 120.0
    max_timeout: float = 600.0
    lifetime: float = 3600.0
    root: Path | None = None
    cpu_seconds: int | None = None
    memory_mb: int | None = None
    max_processes: int | None = None
    max_file_size_mb: int | None = None
    max_output_bytes: int = 50_000
    network: bool = True  # bwrap only: False gives the sandbox its own empty network namespace

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(
                f"terminal_backend should be one of {available_backends()}; got {self.backend!r}. "
                "Fix: set terminal_backend to 'local' (or 'bwrap' where bubblewrap is installed)."
            )
        for name in ("timeout", "max_timeout", "lifetime"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"sandbox {name} should be a positive number of seconds; got {value!r}.")
        for name in ("cpu_seconds", "memory_mb", "max_processes", "max_file_size_mb"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                raise ConfigError(f"sandbox limit {name} should be a positive int or None; got {value!r}.")
        if not isinstance(self.max_output_bytes, int) or self.max_output_bytes < 200:
            raise ConfigError(f"max_output_bytes should be an int >= 200; got {self.max_output_bytes!r}.")


_LIMIT_NAMES = {f.name for f in fields(SandboxConfig)} - {"backend", "timeout", "lifetime", "root"}

_lock = threading.RLock()
_config = SandboxConfig()
_sandboxes: dict[str, Sandbox] = {}
_root: Path | None = None
_reaper: threading.Thread | None = None
_reaper_wake = threading.Event()
_pool: ThreadPoolExecutor | None = None


def configure_sandboxes(
    *,
    backend: str = "local",
    timeout: float = 120,
    lifetime: float = 3600,
    root: str | Path | None = None,
    **limits: Any,
) -> None:
    """Set the backend, default timeout, idle lifetime, root folder and limits of sandboxes created from now on.

    Called by the env base from its config (``terminal_backend``, ``terminal_timeout``, ``terminal_lifetime``).
    Existing sandboxes keep the settings they were created with. Unknown backends or limit names raise ConfigError.
    """
    unknown = sorted(set(limits) - _LIMIT_NAMES)
    if unknown:
        raise ConfigError(
            f"configure_sandboxes() got unknown setting(s) {unknown}; expected some of {sorted(_LIMIT_NAMES)}."
        )
    if backend not in BACKENDS:
        raise ConfigError(
            f"terminal_backend should be one of {available_backends()}; got {backend!r}. "
            "Fix: set terminal_backend to 'local' (or 'bwrap' where bubblewrap is installed)."
        )
    new = SandboxConfig(
        backend=backend,
        timeout=timeout,
        lifetime=lifetime,
        root=Path(root) if root is not None else None,
        **limits,
    )
    BACKENDS[backend].check_available()  # a clear error now, not at the first tool call
    global _config
    with _lock:
        _config = new
    _reaper_wake.set()  # the reaper re-reads the lifetime


def sandbox_config() -> SandboxConfig:
    """The settings new sandboxes will be created with."""
    return _config


def scrubbed_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) without variables that look like secrets."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if not SECRET_NAME.search(k)}


def _safe_name(task_id: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)[:40].strip(".") or "task"
    return cleaned


def _root_dir(config: SandboxConfig) -> Path:
    global _root
    if _root is None or not _root.exists():
        parent = config.root
        if parent is not None:
            parent.mkdir(parents=True, exist_ok=True)
        _root = Path(tempfile.mkdtemp(prefix="hermes-envs-", dir=parent)).resolve()
    return _root


_pool_size = 128


def set_pool_size(size: int) -> None:
    """Size the thread pool that runs tools and sandbox calls off the event loop (``tool_pool_size``)."""
    global _pool, _pool_size
    if size < 1:
        raise ConfigError(
            f"tool_pool_size should be at least 1; got {size!r}. Fix: set --env.tool_pool_size 1 or more."
        )
    with _lock:
        if size != _pool_size and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _pool_size = size


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if (
            _pool is None or _pool._shutdown
        ):  # shut down by its owner (upstream envs do at the end of evaluate)
            _pool = ThreadPoolExecutor(max_workers=_pool_size, thread_name_prefix="hermes-sandbox")
        return _pool


async def run_off_loop(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking call in the sandbox thread pool so the event loop keeps serving other rollouts."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))


class Sandbox:
    """One task's private working directory plus a backend that runs its commands.

    Thread-safe: commands of one task run one at a time, in order; different tasks run in parallel.
    """

    def __init__(self, task_id: str, config: SandboxConfig | None = None, *, workdir: Path | None = None):
        self.task_id = task_id
        self.config = config or _config
        if workdir is None:
            with _lock:
                workdir = Path(tempfile.mkdtemp(prefix=_safe_name(task_id) + "-", dir=_root_dir(self.config)))
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir: Path = workdir.resolve()
        self.created_at = time.monotonic()
        self.last_used = self.created_at
        self.closed = False
        self._run_lock = threading.Lock()
        self._backend: SandboxBackend | None = None
        self._backend_lock = threading.Lock()

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
                self._backend = BACKENDS[self.config.backend](self.workdir, self.config, self._environment())
            return self._backend

    def _environment(self) -> dict[str, str]:
        env = scrubbed_environment()
        env.update(
            HOME=str(self.workdir),
            PWD=str(self.workdir),
            TMPDIR=str(self.workdir),
            HISTFILE="/dev/null",
            HERMES_TASK_ID=self.task_id,
            PAGER="cat",
            GIT_PAGER="cat",
        )
        env.pop("OLDPWD", None)
        return env

    def _timeout(self, timeout: float | None) -> float:
        if timeout is None:
            return float(self.config.timeout)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ValueError(f"timeout should be a positive number of seconds; got {timeout!r}.")
        return float(min(timeout, self.config.max_timeout))

    def execute(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` in the task's shell and return the full :class:`CommandResult`."""
        if not isinstance(command, str):
            raise TypeError(f"command should be a str; got {type(command).__name__}.")
        if "\x00" in command:
            raise ValueError("command should not contain NUL bytes.")
        seconds = self._timeout(timeout)
        with self._run_lock:
            self.last_used = time.monotonic()
            try:
                return self.backend.run(command, seconds)
            finally:
                self.last_used = time.monotonic()

    def run(self, command: str, timeout: float | None = None) -> dict:
        """Run ``command``; returns ``{"exit_code": int, "output": str}`` (stdout and stderr merged, capped).

        A command that runs past ``timeout`` seconds (default: the configured terminal timeout) has its processes
        killed, gets exit code 124 and a note at the end of the output; the shell itself survives.
        """
        result = self.execute(command, timeout)
        return {"exit_code": result.exit_code, "output": result.output}

    async def arun(self, command: str, timeout: float | None = None) -> dict:
        """Awaitable :meth:`run` that runs off the event loop; cancelling it kills the running command."""
        try:
            return await run_off_loop(self.run, command, timeout)
        except asyncio.CancelledError:
            self.interrupt()
            raise

    async def aexecute(self, command: str, timeout: float | None = None) -> CommandResult:
        try:
            return await run_off_loop(self.execute, command, timeout)
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
        """Map ``path`` (relative to the workdir, or absolute inside it) to a real path inside the workdir.

        Raises PathEscapeError for paths that leave the workdir through ``..``, an absolute path or a symlink.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path should be a str; got {type(path).__name__}.")
        raw = os.fspath(path)
        if "\x00" in raw:
            raise ValueError("path should not contain NUL bytes.")
        candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
        if not candidate.is_absolute():
            candidate = self.workdir / candidate
        resolved = Path(os.path.realpath(candidate))
        if resolved != self.workdir and self.workdir not in resolved.parents:
            how = "through a symlink" if os.path.normpath(candidate) != str(resolved) else ""
            raise PathEscapeError(
                f"path {raw!r} resolves to {str(resolved)!r} {how}which is outside this task's working directory "
                f"{str(self.workdir)!r}; access refused. Fix: use a path relative to the working directory "
                f"(e.g. 'out.txt' or 'src/main.py'), or an absolute path under {str(self.workdir)!r}.".replace(
                    "  ", " "
                )
            )
        return resolved

    def relative(self, path: Path) -> str:
        rel = os.path.relpath(path, self.workdir)
        return "." if rel == "." else rel

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes:
        self._touch()
        target = self.resolve_path(path)
        if target.is_dir():
            raise IsADirectoryError(f"{os.fspath(path)!r} is a directory, not a file.")
        if not target.exists():
            raise FileNotFoundError(
                f"no file {os.fspath(path)!r} in the task's working directory {str(self.workdir)!r}."
            )
        return target.read_bytes()

    def read_text(self, path: str | os.PathLike[str]) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def write_bytes(self, path: str | os.PathLike[str], data: bytes) -> Path:
        self._touch()
        target = self.resolve_path(path)
        if target == self.workdir or target.is_dir():
            raise IsADirectoryError(f"{os.fspath(path)!r} is a directory; give a file path.")
        target.parent.mkdir(parents=True, exist_ok=True)
        self.resolve_path(target)  # the parents may have been symlinks created meanwhile
        target.write_bytes(data)
        return target

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
        """Kill every process of this sandbox and remove its working directory. Idempotent."""
        with self._backend_lock:
            if self.closed:
                return
            self.closed = True
            backend, self._backend = self._backend, None
        try:
            if backend is not None:
                backend.close()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)
            if self.workdir.exists():  # read-only subfolders made by the command: make writable and retry
                for dirpath, dirnames, _ in os.walk(self.workdir):
                    for d in dirnames:
                        try:
                            os.chmod(os.path.join(dirpath, d), 0o700)
                        except OSError:
                            pass
                shutil.rmtree(self.workdir, ignore_errors=True)
            with _lock:
                if _sandboxes.get(self.task_id) is self:
                    del _sandboxes[self.task_id]
                _maybe_remove_root()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def _maybe_remove_root() -> None:
    global _root
    if _root is not None and not _sandboxes:
        try:
            if not any(_root.iterdir()):
                _root.rmdir()
                _root = None
        except OSError:
            pass


def get_sandbox(task_id: str, *, create: bool = True) -> Sandbox | None:
    """The sandbox of ``task_id``; created on first use unless ``create`` is False (then None if there is none)."""
    if not isinstance(task_id, str) or not task_id:
        raise ValueError(f"task_id should be a non-empty str; got {task_id!r}.")
    with _lock:
        box = _sandboxes.get(task_id)
        if box is not None and not box.closed:
            return box
        if not create:
            return None
        box = Sandbox(task_id, _config)
        _sandboxes[task_id] = box
        _start_reaper()
        return box


def cleanup_sandbox(task_id: str) -> None:
    """Clean up the sandbox of ``task_id`` (processes killed, folder removed); no-op when it has none."""
    with _lock:
        box = _sandboxes.get(task_id)
    if box is not None:
        box.cleanup()


def active_sandboxes() -> list[str]:
    """Task ids that currently own a sandbox."""
    with _lock:
        return sorted(task for task, box in _sandboxes.items() if not box.closed)


def cleanup_all_sandboxes() -> None:
    """Clean up every sandbox and remove the root folder (also run at interpreter exit)."""
    with _lock:
        boxes = list(_sandboxes.values())
    for box in boxes:
        try:
            box.cleanup()
        except Exception:  # pragma: no cover - best effort at exit
            log.exception("cleaning up sandbox %r failed", box.task_id)
    global _root
    with _lock:
        if _root is not None and not _sandboxes:
            shutil.rmtree(_root, ignore_errors=True)
            _root = None


def reap_idle(now: float | None = None) -> list[str]:
    """Clean up sandboxes idle for longer than their configured lifetime; returns the reaped task ids."""
    now = time.monotonic() if now is None else now
    with _lock:
        idle = [
            box
            for box in _sandboxes.values()
            if not box.closed and not box._run_lock.locked() and now - box.last_used > box.config.lifetime
        ]
    for box in idle:
        log.info("reaping sandbox of task %r: idle for more than %ss", box.task_id, box.config.lifetime)
        box.cleanup()
    return [box.task_id for box in idle]


def _reaper_loop() -> None:
    while True:
        interval = min(max(_config.lifetime / 4, 0.05), 30.0)
        _reaper_wake.wait(interval)
        _reaper_wake.clear()
        try:
            reap_idle()
        except Exception:  # pragma: no cover - never let the reaper die
            log.exception("sandbox reaper failed")


def _start_reaper() -> None:
    global _reaper
    if _reaper is None or not _reaper.is_alive():
        _reaper = threading.Thread(target=_reaper_loop, name="hermes-sandbox-reaper", daemon=True)
        _reaper.start()


atexit.register(cleanup_all_sandboxes)


def _on_sigterm(signum: int, frame: Any) -> None:
    """Remove the sandboxes' files, then die of SIGTERM as before. atexit does not run on a signal, and a `serve`
    worker is usually stopped with SIGTERM: without this, every in-flight rollout's files (the model's work)
    stay in /tmp. No lock is taken (the signal may arrive while this thread holds it); the shells exit when
    their stdin closes with this process."""
    root = _root
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def install_sigterm_cleanup() -> bool:
    """Remove the sandboxes' files when the process gets SIGTERM (HermesAgentBaseEnv calls this).

    Only from the main thread and only over the default handler: an application's own SIGTERM handler is left
    alone. Returns True when installed (or already installed)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    current = signal.getsignal(signal.SIGTERM)
    if current is _on_sigterm:
        return True
    if current is not signal.SIG_DFL:
        return False
    signal.signal(signal.SIGTERM, _on_sigterm)
    return True


def _with_config(**changes: Any) -> SandboxConfig:  # used by tests and the bench
    return replace(_config, **changes)
