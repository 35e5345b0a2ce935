"""The local backends: a persistent bash per task on this machine (``local``) or inside bubblewrap (``bwrap``).

``local`` sees the host filesystem as the trainer's user does, but runs in its own PID namespace with a private
/proc wherever one can be had (see :mod:`._isolation`). ``bwrap`` adds a read-only system, a private /tmp and only
the task's folder writable. Both apply the sandbox's rlimits through ``ulimit`` in the shell.
"""

from __future__ import annotations

import os
import shlex
import sys

from hermes_envs.errors import ConfigError

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

    def __init__(self, workdir, config, env):
        super().__init__(workdir, config, env)
        self.shell = PersistentShell(
            self._argv(), workdir, env, ulimit_flags(config), config.max_output_bytes
        )
        self.fresh_shell: PersistentShell | None = None  # the one running a run_fresh() command now

    def _argv(self) -> list[str]:
        return []

    def prepare(self) -> None:
        self.shell.start()

    @property
    def spawned_in(self) -> str | None:
        return self.shell.spawned_in

    def export(self, variables: dict[str, str]) -> None:
        for key, value in variables.items():
            self.env[key] = value
            self.shell.env[key] = value  # a restarted shell gets them too
            self.shell.write_ahead(f"export {key}={shlex.quote(value)}")

    def run(self, command: str, timeout: float) -> CommandResult:
        return self.shell.run(command, timeout)

    def run_fresh(self, command: str, timeout: float) -> CommandResult:
        """``command`` in a shell started for it (its own PID namespace where the task's shell has one, so no
        process of the task can reach it) and closed after it; see :meth:`SandboxBackend.run_fresh`."""
        shell = PersistentShell(
            self._argv(), self.workdir, self.env, self.shell.ulimits, self.shell.max_output
        )
        shell.watch = self.shell.watch
        self.fresh_shell = shell
        try:
            return shell.run(command, timeout)
        finally:
            self.fresh_shell = None
            shell.close()

    def interrupt(self) -> None:
        self.shell.interrupt()
        fresh = self.fresh_shell
        if fresh is not None:
            fresh.interrupt()

    def close(self) -> None:
        self.shell.close()
        fresh = self.fresh_shell
        if fresh is not None:
            fresh.close()


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
