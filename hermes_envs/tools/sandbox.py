"""Per-task sandboxes (facade): a private folder and a persistent shell for every ``task_id``, kept by a SandboxManager.

A rollout's tools and the reward's :class:`~hermes_envs.tools.context.ToolContext` share one :class:`Sandbox`, looked
up by ``task_id`` (:func:`get_sandbox`). The sandbox owns a private folder under one root temporary folder, runs
commands through a backend (:mod:`hermes_envs.tools.backends`), reads and writes files through
:class:`~hermes_envs.tools._task_files.TaskFiles` (confined to its folder) and is removed by
:meth:`Sandbox.cleanup` (rollout end), by the idle reaper (``terminal_lifetime``) or at interpreter exit. A few
sandboxes are prepared ahead (folder made, shell started) so a new task does not wait for its shell; each is handed
to one task only.

What each backend does and does not isolate is written down in ``docs/sandbox.md``.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ._manager import SandboxManager
from ._sandbox import Sandbox
from ._sandbox_config import SandboxConfig, is_secret, sandbox_environment

__all__ = [
    "Sandbox",
    "SandboxConfig",
    "SandboxManager",
    "active_sandboxes",
    "cleanup_all_sandboxes",
    "cleanup_sandbox",
    "configure_sandboxes",
    "default_manager",
    "get_sandbox",
    "is_secret",
    "sandbox_config",
    "sandbox_environment",
    "using_config",
    "verification_spares",
]

default_manager = SandboxManager()

#: The settings of the env whose runtime is bound now (its rollouts, reward, evaluate: see ``_runtime``): the sandboxes
#: those create get that env's terminal_timeout, backend ... even when another env was configured later in the process.
_ENV_CONFIG: contextvars.ContextVar[SandboxConfig | None] = contextvars.ContextVar(
    "hermes_env_sandbox_config", default=None
)


@contextlib.contextmanager
def using_config(config: SandboxConfig | None) -> Iterator[None]:
    """Sandboxes created inside (in this task, and the tasks and tool threads it starts) use ``config``."""
    token = _ENV_CONFIG.set(config)
    try:
        yield
    finally:
        _ENV_CONFIG.reset(token)


@contextlib.contextmanager
def verification_spares(wanted: bool) -> Iterator[None]:
    """For the span of the block, keep (True) or do not keep (False) a spare fresh shell ahead for each task, as
    after or before this process's first verification command (a ToolContext command of a reward); restored after.

    For tests and benchmarks that need one state or the other whatever ran before in the process."""
    from .backends._fresh import FreshShells

    before = FreshShells.wanted
    FreshShells.wanted = wanted
    try:
        yield
    finally:
        FreshShells.wanted = before


def configure_sandboxes(
    *,
    backend: str = "local",
    timeout: float = 120,
    lifetime: float = 3600,
    root: str | Path | None = None,
    **limits: Any,
) -> None:
    """Configure the default manager (see :meth:`SandboxManager.configure`); the env base calls this from its
    config (``terminal_backend``, ``terminal_timeout``, ``terminal_lifetime``)."""
    default_manager.configure(backend=backend, timeout=timeout, lifetime=lifetime, root=root, **limits)


def sandbox_config() -> SandboxConfig:
    """The settings new sandboxes will be created with (here: the running env's own, else the process default)."""
    return _ENV_CONFIG.get() or default_manager.config


def get_sandbox(task_id: str, *, create: bool = True) -> Sandbox | None:
    """The sandbox of ``task_id``; created on first use unless ``create`` is False (then None if there is none)."""
    return default_manager.get(task_id, create=create, config=_ENV_CONFIG.get())


def cleanup_sandbox(task_id: str) -> None:
    """Clean up the sandbox of ``task_id`` (processes killed, folder removed); no-op when it has none."""
    default_manager.cleanup(task_id)


def active_sandboxes() -> list[str]:
    """Task ids that currently own a sandbox."""
    return default_manager.active()


def cleanup_all_sandboxes() -> None:
    """Clean up every sandbox and remove the root folder (also run at interpreter exit)."""
    default_manager.cleanup_all()


def reap_idle(now: float | None = None) -> list[str]:
    """Clean up the default manager's sandboxes idle for longer than their lifetime; returns their task ids."""
    return default_manager.reap_idle(now)


def set_pool_size(size: int) -> None:
    """Size the thread pool that runs tools and sandbox calls off the event loop (``tool_pool_size``)."""
    default_manager.set_pool_size(size)


async def run_off_loop(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking call in the sandbox thread pool so the event loop keeps serving other rollouts."""
    return await default_manager.run_off_loop(fn, *args, **kwargs)


atexit.register(cleanup_all_sandboxes)


def _on_sigterm(signum: int, frame: Any) -> None:
    """Remove the sandboxes' files, then die of SIGTERM as before. atexit does not run on a signal, and a `serve`
    worker is usually stopped with SIGTERM: without this, every in-flight rollout's files (the model's work)
    stay in /tmp. No lock is taken (the signal may arrive while this thread holds it); the sandboxes' processes
    die with this process (their PID namespaces have a parent-death signal)."""
    root = default_manager.root
    if root is not None:
        default_manager.stop_refills()
        # A spare sandbox being prepared on another thread may add a folder while the tree is removed (the root
        # then stays, "not empty"): try again a few times, briefly; the process dies right after.
        for _ in range(20):
            shutil.rmtree(root, ignore_errors=True)
            if not root.exists():
                break
            time.sleep(0.02)
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
