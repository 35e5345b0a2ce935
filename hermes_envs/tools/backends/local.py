"""The local backends: a persistent bash per task on this machine (``local``) or inside bubblewrap (``bwrap``).

``local`` sees the host filesystem as the trainer's user does, but runs in its own PID namespace with a private
/proc wherever one can be had (see :mod:`._isolation`). ``bwrap`` adds a read-only system, a private /tmp and only
the task's folder writable. Both apply the sandbox's rlimits through ``ulimit`` in the shell.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading

from hermes_envs.errors import ConfigError

from ._fresh import FreshShells
from ._isolation import bwrap_drop_admin, bwrap_usable, pid_namespace_wrapper
from ._shell import PersistentShell
from .base import CommandResult, SandboxBackend, register_backend

__all__ = ["BwrapBackend", "LocalBackend", "ulimit_flags"]


def ulimit_flags(config) -> list[str]:
    """The ``ulimit`` arguments that apply ``config``'s limits (None = no limit)."""
    flags = []
    if config.cpu_seconds is not None:  # the soft limit sends SIGXCPU (exit 152); the hard one a second later
        flags.append(f"-S -t {int(config.cpu_seconds)}")
        flags.append(f"-H -t {int(config.cpu_seconds) + 1}")
    if config.memory_mb is not None:
        flags.append(f"-v {int(config.memory_mb) * 1024}")
    if config.max_processes is not None:
        flags.append(f"-u {int(config.max_processes)}")
    if config.max_file_size_mb is not None:
        flags.append(f"-f {int(config.max_file_size_mb) * 1024}")
    return flags


class ShellBackend(SandboxBackend):
    """A backend whose commands run in one :class:`PersistentShell`; subclasses give the argv that wraps it."""

    name = "shell"
    #: guards making a backend's FreshShells against its close (rare: once per backend whose reward runs commands)
    _fresh_lock = threading.Lock()

    def __init__(self, workdir, config, env):
        super().__init__(workdir, config, env)
        self.shell = PersistentShell(
            self._argv(), workdir, env, ulimit_flags(config), config.max_output_bytes
        )
        self._fresh: FreshShells | None = None
        self._closed = False

    @property
    def fresh(self) -> FreshShells:
        """The reward's shells (run_fresh): one per command, a spare started ahead where the shell is namespaced.
        Made on first use: most rollouts' sandboxes never run a reward command (its locks cost ~1.5 KiB)."""
        fresh = self._fresh
        if fresh is None:
            with ShellBackend._fresh_lock:
                fresh = self._fresh
                if fresh is None:
                    fresh = self._fresh = FreshShells(self._fresh_shell, self._env_now)
                    if self._closed:  # made after close(): refuses commands, starts no spare
                        fresh.close()
        return fresh

    def _env_now(self) -> dict[str, str]:
        return self.env

    def _argv(self) -> list[str]:
        return []

    def _fresh_shell(self, env: dict[str, str]) -> PersistentShell:
        return PersistentShell(self._argv(), self.workdir, env, self.shell.ulimits, self.shell.max_output)

    def _spares_allowed(self) -> bool:
        """Spares only where the task's shell has its own PID namespace (see :mod:`._fresh`)."""
        return self.shell.namespace is not None

    def prepare(self) -> None:
        self.shell.start()
        if FreshShells.wanted and self._spares_allowed():
            self.fresh.ensure_spare()

    @property
    def spawned_in(self) -> str | None:
        return self.shell.spawned_in

    def export(self, variables: dict[str, str]) -> None:
        for key, value in variables.items():
            self.env[key] = value
            self.shell.env[key] = value  # a restarted shell gets them too
            self.shell.write_ahead(f"export {key}={shlex.quote(value)}")

    def run(self, command: str, timeout: float) -> CommandResult:
        try:
            return self.shell.run(command, timeout)
        finally:
            if FreshShells.wanted and self._spares_allowed():  # (a no-op once a spare waits or is coming)
                self.fresh.ensure_spare()

    def _before_fresh(self) -> None:
        """Repair what a fresh shell relies on that the task could have changed since a spare started."""
        return None

    def run_fresh(self, command: str, timeout: float) -> CommandResult:
        """``command`` in a shell no earlier command touched (its own PID namespace where the task's shell has
        one, so no process of the task can reach it), closed after it: a spare started ahead when one waits (see
        :mod:`._fresh`), else one started now; see :meth:`SandboxBackend.run_fresh`."""
        shell, _from_spare = self.fresh.take()
        shell.watch = self.shell.watch
        try:
            self._before_fresh()
            if self._spares_allowed():  # the next one starts while this command runs
                self.fresh.ensure_spare()
            # as a shell started now: in the task's working directory (even if the task moved or replaced that
            # folder since the spare started), its clock from zero
            start = shlex.quote(self.shell_path(self.workdir))
            return shell.run(f"cd -- {start} || exit 1\nSECONDS=0\n{command}", timeout)
        finally:
            self.fresh.done(shell)

    def interrupt(self) -> None:
        self.shell.interrupt()
        fresh = self._fresh
        if fresh is not None:
            fresh.interrupt()

    def close(self) -> None:
        with ShellBackend._fresh_lock:
            self._closed = True
            fresh = self._fresh
        if fresh is not None:
            fresh.close()
        self.shell.close()


@register_backend
class LocalBackend(ShellBackend):
    """A persistent bash on this machine, in the task's folder, with an allow-listed environment and rlimits, in
    its own PID namespace where available (``pid_namespace=False`` turns that off)."""

    name = "local"

    def _argv(self) -> list[str]:
        return pid_namespace_wrapper() if self.config.pid_namespace else []


@register_backend
class BwrapBackend(ShellBackend):
    """The local shell inside bubblewrap: read-only system, private /tmp, only the task's folder writable,
    other tasks' folders hidden, own PID namespace (and, with ``network=False``, no network)."""

    name = "bwrap"
    links_confined = True  # the task's folder is the only writable mount: no hard link can reach outside it

    @classmethod
    def check_available(cls) -> None:
        if bwrap_usable() is not None:
            return
        from shutil import which

        if which("bwrap") is None:
            raise ConfigError(
                "terminal_backend 'bwrap' should find bubblewrap installed; got no 'bwrap' on PATH. "
                "Fix: install it (Debian/Ubuntu: apt-get install bubblewrap) or use terminal_backend='local'."
            )
        raise ConfigError(
            "terminal_backend 'bwrap' should be able to create namespaces; got a bubblewrap that cannot. "
            "Fix: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as "
            "root, or use terminal_backend='local'."
        )

    def __init__(self, workdir, config, env):
        self.check_available()
        super().__init__(workdir, config, env)

    def _argv(self) -> list[str]:
        wd = str(self.workdir)
        root = str(self.workdir.parent)
        argv = [bwrap_usable() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += ["--tmpfs", "/tmp"]
        # A private /tmp would also hide a Python (a venv, a checkout) that lives under /tmp: keep it visible,
        # read-only, so tools can still run the trainer's own interpreter.
        for keep in python_dirs_under("/tmp"):
            argv += ["--ro-bind", keep, keep]
        argv += ["--tmpfs", root]  # other tasks' folders are not visible
        argv += ["--bind", wd, wd, "--chdir", wd, "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        argv += ["--die-with-parent"]
        argv += bwrap_drop_admin()
        if not self.config.network:
            argv += ["--unshare-net"]
        return [*argv, "--"]


def python_dirs(*, under: str | None = None) -> list[str]:
    """Folders of the running Python (prefix, base prefix, executable's folder), optionally only those under
    ``under``; nested ones are dropped."""
    found: list[str] = []
    for path in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        real = os.path.realpath(path)
        if under is not None and not real.startswith(under.rstrip("/") + "/"):
            continue
        if not any(real == f or real.startswith(f + "/") for f in found):
            found = [f for f in found if not f.startswith(real + "/")] + [real]
    return found


def python_dirs_under(prefix: str) -> list[str]:
    return python_dirs(under=prefix)
