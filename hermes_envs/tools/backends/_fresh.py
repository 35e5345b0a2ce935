"""The shells the reward's commands run in (:meth:`SandboxBackend.run_fresh`), one spare started ahead.

Each verification command runs in a shell no earlier command touched and that is closed right after it: the agent
cannot forge what the reward runs (issue 28). Starting that shell costs ~20 ms (exec of the namespace wrappers and
bash, its set-up round trip), so :class:`FreshShells` keeps one started ahead, in the background: when the task's
shell starts (once this process's rewards run verification commands at all) and as each verification command
begins. A spare is used for ONE command and then closed, never reused; it was started with the same argv (its own
PID namespace, the task's files), limits and the environment the task started with (plus the harness's own later
exports, e.g. the task id of a pre-started sandbox), never anything the agent ran. Spares are kept only where the
task's shell has its own PID namespace: without one, the agent's processes could see a waiting spare in /proc and
write into its stdin, which a shell started at the call cannot suffer for so long. A spare is also skipped while
the trainer uses more than half its descriptor limit.
"""

from __future__ import annotations

import logging
import os
import resource
import shlex
import threading
from collections.abc import Callable
from typing import ClassVar

from hermes_envs import _spawn_namespace
from hermes_envs.errors import SandboxError

from ._shell import PersistentShell
from ._workers import spawner_gone, start_later

__all__ = ["FreshShells"]

log = logging.getLogger("hermes_envs.tools.sandbox")

_QUEUED, _STARTING = "queued", "starting"


def _descriptors_short() -> bool:
    """True when this process holds more than half its descriptor limit (a spare's pipes would crowd tasks out)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return False
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        return False
    return used > soft // 2


class FreshShells:
    """One backend's fresh shells: :meth:`take` one for a command, :meth:`done` after it; one spare kept ahead.

    ``make(env)`` builds an unstarted :class:`PersistentShell` like the task's (argv, workdir, limits) with ``env``;
    ``env_now()`` is the environment the task's commands start with now (the harness's exports included)."""

    #: True once this process ran a verification command: until then a task's shell starting starts no spare (an
    #: env whose reward never runs one pays nothing); from then on every task's does. Tests may set it.
    wanted: ClassVar[bool] = False

    def __init__(
        self,
        make: Callable[[dict[str, str]], PersistentShell],
        env_now: Callable[[], dict[str, str]],
    ) -> None:
        self._make = make
        self._env_now = env_now
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._spare: tuple[PersistentShell, dict[str, str]] | None = (
            None  # (started shell, env it started with)
        )
        self._coming: str | None = None  # None, _QUEUED (not begun: may be called off) or _STARTING
        self._closed = False
        #: the shell running a command now (interrupt and close reach it)
        self.in_use: PersistentShell | None = None
        #: False: no spare is started ahead (every command waits for its own shell; the bench's baseline)
        self.ahead = True
        #: commands served by a spare / by a shell started for them (tests and the bench read these)
        self.from_spare = 0
        self.started_cold = 0

    # ---------------------------------------------------------------- spares
    def ready(self) -> bool:
        """True when a started spare waits for the next command."""
        with self._lock:
            return self._spare is not None

    def ensure_spare(self) -> None:
        """Start a spare in the background unless one waits or is coming, or no verification command ran in this
        process yet (cheap then: call it freely)."""
        if not FreshShells.wanted:
            return
        with self._lock:
            if self._closed or not self.ahead or self._spare is not None or self._coming is not None:
                return
            if spawner_gone() or _spawn_namespace.expected() == _spawn_namespace.UNKNOWN:
                return  # at exit a spare would die with the spawner; unknown namespace: it could not be handed out
            self._coming = _QUEUED
        start_later(self._start_spare)

    def _start_spare(self) -> None:
        """(starter thread) Start a spare and keep it, unless the backend closed or the start was called off."""
        with self._lock:
            if self._coming != _QUEUED or self._closed:
                if self._coming == _QUEUED:
                    self._coming = None
                return
            self._coming = _STARTING
        shell: PersistentShell | None = None
        env: dict[str, str] = {}
        try:
            if not _descriptors_short():
                env = dict(self._env_now())
                shell = self._make(env)
                shell.start()
        except Exception:  # the command then starts its own shell and reports the problem there
            log.debug("starting a spare fresh shell failed", exc_info=True)
            if shell is not None:
                shell.close()
            shell = None
        with self._lock:
            self._coming = None
            if shell is not None and not self._closed and self._spare is None:
                self._spare, shell = (shell, env), None
            self._changed.notify_all()
        if shell is not None:  # closed meanwhile: nothing of it may outlive the backend
            shell.close()

    # ---------------------------------------------------------------- commands
    def take(self) -> tuple[PersistentShell, bool]:
        """A shell for one command and whether it is a spare (else started for it, on its first run). Waits for a
        spare already starting (less than a start of its own); one still queued is called off."""
        FreshShells.wanted = True
        with self._lock:
            if self._closed:
                raise SandboxError("the task's shell was closed (sandbox cleaned up).")
            if self._coming == _STARTING:
                self._changed.wait_for(lambda: self._coming != _STARTING, timeout=15)
            elif self._coming == _QUEUED:
                self._coming = None
            spare, self._spare = self._spare, None
        shell: PersistentShell | None = None
        if spare is not None and not self.ahead:  # (switched off since it started)
            spare[0].close()
        elif spare is not None:
            shell = self._prepared(*spare)
        from_spare = shell is not None
        if shell is None:
            shell = self._make(dict(self._env_now()))
        with self._lock:
            if self._closed:
                shell.close()
                raise SandboxError("the task's shell was closed (sandbox cleaned up).")
            self.in_use = shell
            if from_spare:
                self.from_spare += 1
            else:
                self.started_cold += 1
        return shell, from_spare

    def _prepared(self, shell: PersistentShell, made_with: dict[str, str]) -> PersistentShell | None:
        """``shell`` ready for its command (the harness's exports since it started written ahead), or None (and
        closed) when it died or lives in another network namespace than a shell started now would."""
        proc = shell.proc
        if (
            shell.closed
            or proc is None
            or proc.poll() is not None
            or not _spawn_namespace.fits(shell.spawned_in)
        ):
            shell.close()
            return None
        now = dict(self._env_now())
        for key, value in now.items():
            if made_with.get(key) != value:
                shell.write_ahead(f"export {key}={shlex.quote(value)}")
        for key in made_with.keys() - now.keys():
            if key != "HERMES_SANDBOX_ID":
                shell.write_ahead(f"unset {key}")
        return shell

    def done(self, shell: PersistentShell) -> None:
        """Close ``shell``: used for one command, never again."""
        with self._lock:
            if self.in_use is shell:
                self.in_use = None
        shell.close()

    def interrupt(self) -> None:
        shell = self.in_use
        if shell is not None:
            shell.interrupt()

    def close(self) -> None:
        """Close the shell in use and the spare; a spare starting now is closed when its start ends. Idempotent."""
        with self._lock:
            self._closed = True
            if self._coming == _QUEUED:
                self._coming = None
            spare, self._spare = self._spare, None
            in_use, self.in_use = self.in_use, None
        for shell in (in_use, spare[0] if spare is not None else None):
            if shell is not None:
                shell.close()
