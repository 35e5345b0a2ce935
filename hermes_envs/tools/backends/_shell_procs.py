"""Which processes are a task's shell's, and how they die: the mixin :class:`ShellProcesses` of
:class:`~._shell.PersistentShell`.

The shell is found behind its wrappers (bwrap, setpriv + unshare) by following their children; the task's processes
are those of the shell's PID namespace (which ``setsid`` cannot leave), else of its session plus those carrying the
environment marker. A command's timeout kills the task's processes that started after it did, never the wrappers,
the shell or earlier background jobs; a close kills the namespace's init, and the kernel the rest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

import hermes_envs.tools.backends._procfs as procfs

__all__ = ["ShellProcesses"]


class ShellProcesses:
    """The process side of a :class:`~._shell.PersistentShell` (a mixin: same object, same attributes)."""

    argv: list[str]
    marker: bytes
    proc: subprocess.Popen[bytes] | None
    shell_pid: int | None
    namespace: str | None  # the shell's PID namespace when it is not ours
    namespace_init: int | None
    _infra: set[int]
    _cmd_start: int | None

    def _find_shell(self) -> None:
        """Find the shell's pid, its PID namespace and that namespace's init, and the wrappers (bwrap, unshare)
        between us and it: the wrappers and the shell are never killed by a command timeout."""
        assert self.proc is not None
        if not self.argv:
            chain: list[int] | None = [self.proc.pid]
        else:  # wrapped: follow the wrappers' children down to bash (a few small reads, not a scan of /proc)
            chain = procfs.descendants_until(self.proc.pid, "bash")
        if chain is None:  # the kernel does not list children: the newest process of the session named bash
            members = procfs.session_members(self.proc.pid)
            chain = sorted(members)
            shell = next(
                (
                    p
                    for p in sorted(members, key=members.__getitem__, reverse=True)
                    if procfs.comm(p) == "bash"
                ),
                self.proc.pid,
            )
            chain.append(shell)
        self.shell_pid = chain[-1]
        ns = procfs.pid_namespace(self.shell_pid)
        if ns is not None and ns != procfs.pid_namespace(os.getpid()):
            self.namespace = ns
            self.namespace_init = procfs.namespace_init(ns, chain)
        self._infra = {*chain, self.proc.pid}

    def members(self) -> dict[int, int]:
        """pid -> start ticks of every process of this task (its PID namespace, else its session)."""
        if self.namespace is not None:
            return procfs.namespace_members(self.namespace)
        return procfs.session_members(self.proc.pid) if self.proc is not None else {}

    def kill_command(self, start_ticks: int | None = None) -> None:
        """Stop the running command: USR1 to the shell (abandon the rest), SIGKILL its newer processes."""
        start_ticks = self._cmd_start if start_ticks is None else start_ticks
        proc, shell = self.proc, self.shell_pid
        if proc is None or start_ticks is None:
            return
        if shell is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(shell, signal.SIGUSR1)
        for _ in range(20):  # repeat: a dying parent may have forked meanwhile
            members = self.members()
            if (
                self.namespace is None
            ):  # no namespace: those that left the session keep our environment marker
                for pid in procfs.pids_with_marker(self.marker):
                    st = procfs.proc_stat(pid)
                    if st is not None:
                        members.setdefault(pid, st[2])
            victims = [
                pid for pid, started in members.items() if started >= start_ticks and pid not in self._infra
            ]
            if not victims:
                return
            for pid in victims:
                procfs.kill(pid)
            time.sleep(0.005)

    def _kill(self) -> None:
        """SIGKILL the whole shell: its namespace's init (the kernel then kills every process of the namespace,
        none can leave it) and its session (the wrappers outside it); without a namespace, every member by name."""
        proc = self.proc
        if proc is None:
            return
        init = self.namespace_init
        if init is not None and procfs.pid_namespace(init) != self.namespace:
            init = None  # it exited already and its pid may be another process's now: never signal it
        members = [] if init is not None else list(self.members())
        if init is not None:
            procfs.kill(init)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in members:
            procfs.kill(pid)
