"""The :class:`SandboxManager`: every sandbox of a process, its settings, root folder, spares, reaper and pool.

One default instance (:data:`hermes_envs.tools.sandbox.default_manager`) serves the module-level functions, like
the default tool registry; tests and embedders may make their own.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hermes_envs import _spawn_namespace
from hermes_envs.errors import ConfigError

from ._sandbox import Sandbox
from ._sandbox_config import SETTING_NAMES, SandboxConfig
from .backends import SandboxBackend, _workers, available_backends, backends

__all__ = ["SandboxManager"]

log = logging.getLogger("hermes_envs.tools.sandbox")

#: Most pre-started sandboxes kept after bursts grew the pool (each is an idle bash and its wrapper, ~4 MB).
_MAX_SPARES = 16
#: Threads pre-starting sandboxes at once.
_PREPARERS = 4
#: Seconds a pre-started sandbox may wait for a task before it is retired, beyond the ``prestart`` kept ready.
SPARE_IDLE_SECONDS = 60.0


class SandboxManager:
    """Every sandbox of this process: settings, the task -> sandbox table, the root folder, the pre-started
    sandboxes, the idle reaper and the thread pool that runs sandbox calls off the event loop."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._settled = threading.Condition(self._lock)  # notified when a pre-start in progress ends
        self._preparing = 0
        self._in_prep: dict[
            object, int
        ] = {}  # pre-starts in progress (a slot each) -> the generation they are for
        self._config = SandboxConfig()
        self._backend_class: type[SandboxBackend] | None = None
        self._sandboxes: dict[str, Sandbox] = {}
        self._spares: list[Sandbox] = []
        self._generation = (
            0  # bumped when settings change or everything is cleaned up: older spares are stale
        )
        self._root: Path | None = None
        self._reaper: threading.Thread | None = None
        self._reaper_wake = threading.Event()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 128
        self._target = 0  # spares to keep: prestart, grown when bursts drain them (target_spares)
        self._prepare_pool: _workers.DaemonPool | None = None

    # ---------------------------------------------------------------- settings
    @property
    def config(self) -> SandboxConfig:
        """The settings new sandboxes are created with."""
        return self._config

    @property
    def root(self) -> Path | None:
        """The folder holding every sandbox of this process (None until the first one)."""
        return self._root

    def configure(
        self,
        *,
        backend: str = "local",
        timeout: float = 120,
        lifetime: float = 3600,
        root: str | Path | None = None,
        **settings: Any,
    ) -> None:
        """Set the backend, default timeout, idle lifetime, root folder and limits of sandboxes created from now on.

        Existing sandboxes keep the settings they were created with. Unknown backends or setting names raise
        ConfigError; a backend name whose service is absent gets its stand-in (said once, in a log warning).
        """
        new = self.build_config(backend=backend, timeout=timeout, lifetime=lifetime, root=root, **settings)
        chosen = self._resolve_backend(new)
        with self._lock:
            self._target = new.prestart
            self._config = new
            self._backend_class = chosen
            self._generation += 1
            spares, self._spares = self._spares, []
        for box in spares:
            box.cleanup()
        self._reaper_wake.set()  # the reaper re-reads the lifetime

    @staticmethod
    def build_config(
        *,
        backend: str = "local",
        timeout: float = 120,
        lifetime: float = 3600,
        root: str | Path | None = None,
        **settings: Any,
    ) -> SandboxConfig:
        """A validated :class:`SandboxConfig` (unknown backends or setting names raise ConfigError), not applied:
        an env keeps its own for the sandboxes its rollouts create (:func:`hermes_envs.tools.sandbox.using_config`)."""
        unknown = sorted(set(settings) - SETTING_NAMES)
        if unknown:
            raise ConfigError(
                f"configure_sandboxes() got unknown setting(s) {unknown}; expected some of {sorted(SETTING_NAMES)}."
            )
        if backend not in backends:
            raise ConfigError(
                f"terminal_backend should be one of {available_backends()}; got {backend!r}. "
                "Fix: set terminal_backend to 'local' (or 'bwrap', 'container', 'docker', or an upstream name)."
            )
        return SandboxConfig(
            backend=backend,
            timeout=timeout,
            lifetime=lifetime,
            root=Path(root) if root is not None else None,
            **settings,
        )

    @staticmethod
    def _resolve_backend(config: SandboxConfig) -> type[SandboxBackend]:
        asked = backends.get(config.backend)
        asked.check_available()  # a clear error now, not at the first tool call
        chosen = asked.stands_in_for(config.backend)
        if chosen is not asked:
            chosen.check_available()
        return chosen

    def backend_class_for(self, config: SandboxConfig) -> type[SandboxBackend]:
        with self._lock:
            if config is self._config:
                if self._backend_class is None:
                    self._backend_class = self._resolve_backend(config)
                return self._backend_class
        return self._resolve_backend(config)

    # ---------------------------------------------------------------- sandboxes
    def root_dir(self) -> Path:
        with self._lock:
            if self._root is None or not self._root.exists():
                parent = self._config.root
                if parent is not None:
                    parent.mkdir(parents=True, exist_ok=True)
                self._root = Path(tempfile.mkdtemp(prefix="hermes-envs-", dir=parent)).resolve()
            return self._root

    def get(
        self, task_id: str, *, create: bool = True, config: SandboxConfig | None = None
    ) -> Sandbox | None:
        """The sandbox of ``task_id``; created on first use unless ``create`` is False (then None if none).

        ``config``: the settings a sandbox created now gets (an env's own); default the manager's. Pre-started
        spares were made with the manager's settings, so they go only to a task that asks for those."""
        if not isinstance(task_id, str) or not task_id:
            raise ConfigError(
                f"task_id should be a non-empty str; got {task_id!r}. Fix: pass the rollout's task id."
            )
        with self._lock:
            box = self._sandboxes.get(task_id)
            if box is not None and not box.closed:
                return box
            if not create:
                return None
            wanted = self._config if config is None else config
            box = self._take_spare() if wanted == self._config else None
            if box is not None:
                box.adopt(task_id)
                # the refill would compete with this task's first command for the CPU: it waits for it
                box.after_first_command = self._request_refill
                self._sandboxes[task_id] = box
                self._start_reaper()
                return box
            if wanted is self._config and self._config.prestart:  # a burst drained the spares: keep more
                self._target = min(max(self._target, self._config.prestart) + 1, self._max_spares())
            self._preparing += 1  # cleanup_all() waits for this folder as for a spare's
        made: Sandbox | None = None
        try:
            # Made outside the lock (a folder, a few system calls): a tool thread making it that waits for the GIL
            # meanwhile would hold the lock every cleanup on the event loop takes (64 rollouts starting at once).
            made = Sandbox(task_id, wanted, manager=self)
        finally:
            with self._lock:
                self._preparing -= 1
                self._settled.notify_all()
                box = self._sandboxes.get(task_id)
                if made is not None and (box is None or box.closed):
                    box, made = made, None
                    self._sandboxes[task_id] = box
                    self._request_refill()
                    self._start_reaper()
        if made is not None:  # another thread made the task's sandbox meanwhile: that one serves it
            made.cleanup()
        assert box is not None
        return box

    def _request_refill(self) -> None:
        if _spawn_namespace.expected() == _spawn_namespace.UNKNOWN:
            return  # the guard cannot say where a shell would start: no spare could be handed out
        with self._lock:
            if self._config.prestart:
                self._preparer().submit(functools.partial(self._refill, self._generation))

    def discard_spares(self) -> None:
        """Drop the pre-started sandboxes (and any being prepared); new spares are made on demand. (A change of
        network guard needs none of this: a spare goes only to a task that would start its shell in the same
        network namespace, see :meth:`_take_spare`.)"""
        with self._lock:
            self._generation += 1
            spares, self._spares = self._spares, []
        for box in spares:
            box.cleanup()

    def prepared(self) -> int:
        """How many pre-started sandboxes wait for a task started now (in the network namespace it would get)."""
        with self._lock:
            return sum(1 for box in self._spares if _fits(box))

    def _take_spare(self) -> Sandbox | None:
        """The oldest spare a task started now may have. A spare's shell lives in the network namespace it was
        forked in: it goes only to a task whose own shell would start in that one (a loopback-only namespace inside
        an isolating network guard, the host's outside), so a shell from outside a guard never serves a task inside
        one, nor the reverse; spares of the other namespace wait for the next guard (or its end)."""
        if (
            self._spares and _workers.spawner_gone()
        ):  # at exit: their shells are being killed with the spawner
            spares, self._spares = self._spares, []
            for box in spares:
                box.cleanup()
            return None
        for box in list(self._spares):
            if box.closed or box.config is not self._config:
                self._spares.remove(box)
                box.cleanup()
            elif _fits(box):
                self._spares.remove(box)
                return box
        return None

    def _max_spares(self) -> int:
        return max(self._config.prestart, _MAX_SPARES)

    def target_spares(self) -> int:
        """How many pre-started sandboxes the manager keeps ready now: ``prestart``, grown by one (up to
        ``max(prestart, 16)``) each time a task found none left, so the next burst of that size finds them."""
        with self._lock:
            return max(self._target, self._config.prestart) if self._config.prestart else 0

    def _preparer(self) -> _workers.DaemonPool:
        with self._lock:
            if self._prepare_pool is None:
                # a few at once: most of a shell's start is waiting for it (exec, namespaces), not our CPU
                self._prepare_pool = _workers.DaemonPool("hermes-sandbox-prep", _PREPARERS)
            return self._prepare_pool

    def _refill(self, generation: int) -> None:
        """Prepare sandboxes (folder made, shell started) until :meth:`target_spares` wait for a task.

        Runs on a preparer thread (a few refills at once, after a burst): only the fork itself goes to the spawner
        thread, so a task that starts its own shell meanwhile waits for one fork at most, never for the refill."""
        while True:
            box = None
            slot = object()  # this pre-start in _in_prep, from before its folder exists
            with self._lock:
                coming = sum(1 for g in self._in_prep.values() if g == generation)
                ready = sum(1 for spare in self._spares if _fits(spare))
                if generation != self._generation or ready + coming >= self.target_spares():
                    return
                config = self._config
                # counted before its folder is made: cleanup_all() waits for it before removing the root
                self._preparing += 1
                self._in_prep[slot] = generation
            try:
                # Made outside the lock (a folder, a few system calls): a thread making it that waits for the
                # GIL meanwhile would hold the lock that every cleanup on the event loop takes.
                box = Sandbox("task", config, manager=self)
                box.backend.prepare()
            except Exception:  # the next task starts its own shell and reports the problem
                log.debug("pre-starting a sandbox failed", exc_info=True)
                self._settle(box, slot, generation, keep=False)
                return
            if not self._settle(box, slot, generation, keep=True):
                return

    def _settle(self, box: Sandbox | None, slot: object, generation: int, *, keep: bool) -> bool:
        """Add a freshly prepared spare (when still wanted) or remove it; True when the refill should go on.
        ``slot``: the pre-start's entry in ``_in_prep``; ``box`` None when making it failed.

        A spare forked just as a network guard began or ended lives in the other namespace: it is kept for the
        tasks of that one (up to twice the most spares) but not counted as ready, and this refill stops."""
        fits = kept = False
        if box is not None:
            with self._lock:
                fits = _fits(box)
                kept = (
                    keep
                    and generation == self._generation
                    and not box.closed
                    and (fits or len(self._spares) < 2 * self._max_spares())
                )
                if kept:
                    self._spares.append(box)
            if not kept:
                box.cleanup()
        with self._lock:
            self._preparing -= 1
            self._in_prep.pop(slot, None)
            self._settled.notify_all()
        return kept and fits

    def _forget(self, box: Sandbox) -> None:
        with self._lock:
            if self._sandboxes.get(box.task_id) is box:
                del self._sandboxes[box.task_id]
            if box in self._spares:
                self._spares.remove(box)
            self._maybe_remove_root()

    def _maybe_remove_root(self) -> None:
        """Once the last sandbox is gone, queue the root folder's removal behind the folders the janitor still
        has to remove. Never waits for them here: this runs under the manager lock, on the caller's thread (the
        event loop, in an env's ``score_rollout``), and waiting held the loop 13-37 ms in one cleanup of six."""
        if self._root is not None and not self._sandboxes and not self._spares:
            _workers.later(functools.partial(self._remove_root_if_unused, self._root))

    def _remove_root_if_unused(self, root: Path) -> None:
        """(janitor, after the folders queued before) Remove ``root`` if it is still the root, no sandbox uses
        it or is being prepared in it, and it is empty (a sandbox made since then keeps it)."""
        with self._lock:
            if self._root is not root or self._sandboxes or self._spares or self._preparing:
                return
            try:
                root.rmdir()  # only an empty folder: a task folder made meanwhile keeps it
            except OSError:
                return
            self._root = None

    def cleanup(self, task_id: str) -> None:
        """Clean up the sandbox of ``task_id`` (processes killed, folder removed); no-op when it has none."""
        with self._lock:
            box = self._sandboxes.get(task_id)
        if box is not None:
            box.cleanup()
            box._first_done()  # a task that ran no command still has its spare replaced

    def active(self) -> list[str]:
        """Task ids that currently own a sandbox."""
        with self._lock:
            return sorted(task for task, box in self._sandboxes.items() if not box.closed)

    def stop_refills(self) -> None:
        """Make refills in progress stop after their current spare; no lock taken (called from a signal handler,
        which may interrupt a thread holding it)."""
        self._generation += 1

    def cleanup_all(self) -> None:
        """Clean up every sandbox (and the pre-started ones) and remove the root folder."""
        with self._lock:
            self._generation += 1
            # a spare being prepared now would be made in a folder we are about to remove: let it finish first
            self._settled.wait_for(lambda: self._preparing == 0, timeout=15)
            boxes = list(self._sandboxes.values()) + self._spares
            self._spares = []
        for box in boxes:
            try:
                box.cleanup()
            except Exception:  # pragma: no cover - best effort at exit
                log.exception("cleaning up sandbox %r failed", box.task_id)
        _workers.flush()
        with self._lock:
            if self._root is not None and not self._sandboxes:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    def reap_idle(self, now: float | None = None) -> list[str]:
        """Clean up sandboxes idle for longer than their configured lifetime; returns the reaped task ids."""
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = [
                box
                for box in self._sandboxes.values()
                if not box.closed and not box.busy and now - box.last_used > box.config.lifetime
            ]
        for box in idle:
            log.info("reaping sandbox of task %r: idle for more than %ss", box.task_id, box.config.lifetime)
            box.cleanup()
        return [box.task_id for box in idle]

    def retire_idle_spares(self, now: float | None = None) -> int:
        """Retire the pre-started sandboxes that waited more than :data:`SPARE_IDLE_SECONDS` for a task, keeping
        ``prestart`` of those a task would get now; the pool's target shrinks to what is left (a burst grew it, see
        :meth:`target_spares`). Spares made for the other network namespace go once idle that long. Returns how
        many were retired. The reaper calls it; a task never waits for it (nothing it would take is retired)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            keep = self._config.prestart
            retired: list[Sandbox] = []
            for box in list(self._spares):  # oldest first
                if now - box.created_at <= SPARE_IDLE_SECONDS:
                    continue
                if _fits(box) and keep and sum(1 for b in self._spares if _fits(b)) <= keep:
                    continue
                self._spares.remove(box)
                retired.append(box)
            if retired:  # the next burst grows it again, one task that finds none at a time
                self._target = max(keep, sum(1 for b in self._spares if _fits(b)))
        for box in retired:
            box.cleanup()
        return len(retired)

    def _reaper_loop(self) -> None:
        while True:
            interval = min(max(self._config.lifetime / 4, 0.05), 30.0)
            self._reaper_wake.wait(interval)
            self._reaper_wake.clear()
            try:
                self.reap_idle()
                self.retire_idle_spares()
            except Exception:  # pragma: no cover - never let the reaper die
                log.exception("sandbox reaper failed")

    def _start_reaper(self) -> None:
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(
                target=self._reaper_loop, name="hermes-sandbox-reaper", daemon=True
            )
            self._reaper.start()

    # ---------------------------------------------------------------- thread pool
    def set_pool_size(self, size: int) -> None:
        """Size the thread pool that runs tools and sandbox calls off the event loop (``tool_pool_size``)."""
        if size < 1:
            raise ConfigError(
                f"tool_pool_size should be at least 1; got {size!r}. Fix: set --env.tool_pool_size 1 or more."
            )
        with self._lock:
            if size != self._pool_size and self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None
            self._pool_size = size

    def executor(self) -> ThreadPoolExecutor:
        pool = self._pool  # every tool call asks, on the event loop: no lock while the pool runs
        if pool is not None and not getattr(pool, "_shutdown", False):
            return pool
        with self._lock:
            # Recreated when shut down by its owner: upstream envs shut `_tool_executor` down at the end of evaluate.
            # (``_shutdown``: a seam, hermes_envs._seams; a Python without it: treated as running)
            if self._pool is None or getattr(self._pool, "_shutdown", False):
                self._pool = ThreadPoolExecutor(
                    max_workers=self._pool_size, thread_name_prefix="hermes-sandbox"
                )
            return self._pool

    async def run_off_loop(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Run a blocking call in the sandbox thread pool so the event loop keeps serving other rollouts."""
        loop = asyncio.get_running_loop()
        # The caller's context goes with the call, so a tool sees e.g. the env whose rollout it serves.
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await loop.run_in_executor(self.executor(), call)


def _fits(box: Sandbox) -> bool:
    """True when pre-started ``box`` may serve a task started now (see :meth:`SandboxManager._take_spare`)."""
    return _spawn_namespace.fits(box.spawned_in)
