"""A persistent bash per task, spoken to over pipes.

How a command runs: the task's bash reads wrapper lines on its stdin. Each wrapper runs the command in the shell
itself (so ``cd`` and ``export`` persist), with stdin from /dev/null, stdout and stderr into one pipe that we read,
and then writes ``<token>:<nonce>:<exit code>:<bg>`` to a control pipe (``nonce`` is new for every command).

The control pipe is not trusted: a program the command runs can open the shell's descriptors through
``/proc/<shell>/fd`` and write a line of its own. A line counts only when it carries this command's nonce (stale
and foreign lines are dropped, and the pipe is drained before each command) and when the shell itself is back
waiting for its next wrapper (blocked in ``read(0)``, as ``/proc/<shell>/syscall`` says): a forged line written
while the command still runs is ignored, and the shell's real line, written when the command ends, is the one
taken. So a command cannot end its own call early, nor hand its result to the next command. On timeout we
signal the shell (a USR1 trap makes it abandon the rest of the command) and SIGKILL every process of the task that
started after the command did: the command's processes die, the shell and earlier background jobs stay. "Of the
task" means of its PID namespace when it has one (``setsid`` cannot leave that), else of its session.

Shells are forked from a spawner thread and the slow half of a close (waiting for the wrappers, closing the
pipes) runs on the janitor thread (:mod:`._workers`).

Which processes are the task's and how they are killed lives in :mod:`._shell_procs` (the mixin ShellProcesses).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import hermes_envs.tools.backends._procfs as procfs
from hermes_envs import _spawn_namespace
from hermes_envs.errors import SandboxError

from ._output import CappedOutput
from ._shell_procs import ShellProcesses
from ._workers import later, spawn
from .base import CommandResult

__all__ = ["PersistentShell"]

_READ = 65536
_GRACE = 2.0  # seconds the shell gets to come back after a timeout kill before it is replaced
_WATCH_EVERY = 0.25  # seconds between two questions to the watch (the disk quota) while a command runs
# quick looks (sched_yield between them) for the shell back in read(0), before waiting 1 ms a look
_IDLE_SPIN = 200


class PersistentShell(ShellProcesses):
    """One long-lived bash per task; see the module docstring for the protocol."""

    def __init__(
        self, argv: list[str], workdir: Path, env: dict[str, str], ulimits: list[str], max_output: int
    ):
        self.argv = argv
        self.workdir = workdir
        self.ulimits = ulimits
        self.max_output = max_output
        self.token = "__hermes_done_" + secrets.token_hex(8)
        self.marker = ("HERMES_SANDBOX_ID=" + secrets.token_hex(8)).encode()
        self.env = dict(env, HERMES_SANDBOX_ID=self.marker.split(b"=", 1)[1].decode())
        self.proc: subprocess.Popen[bytes] | None = None
        self.shell_pid: int | None = None
        self.namespace: str | None = None  # the shell's PID namespace when it is not ours
        self.namespace_init: int | None = None
        #: the network namespace the shell was forked in (its spawner thread's, as the kernel said then)
        self.spawned_in: str | None = None
        self.timed_out = False
        self.watch: Callable[[], str | None] | None = None  # asked while a command runs; a message kills it
        self.watch_note: str | None = None
        self._ctl_r: int | None = None
        self._cmd_start: int | None = None
        self._interrupted = False
        self._infra: set[int] = set()
        self._busy = False
        self._bg_tick: int | None = None
        self._pending = ""  # text written ahead of the next command (the task id of a pre-started shell)
        #: the first field of /proc/<shell>/syscall while the shell waits for a wrapper (read), None: not known
        self._idle_nr: str | None = None
        self._syscall_fd: int | None = None
        self._lock = threading.Lock()  # guards proc / fds against close() from another thread
        self.closed = False

    # ------------------------------------------------------------ process
    def start(self) -> None:
        """Start the shell now (idempotent), so the first command does not wait for it."""
        with self._lock:
            if self.closed:
                raise SandboxError("the task's shell was closed (sandbox cleaned up).")
            if self.proc is None or self.proc.poll() is not None:
                self._discard()
                self._start()

    def _popen(self, ctl_w: int) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            [*self.argv, "bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=self.env,
            pass_fds=(ctl_w,),
            start_new_session=True,
            bufsize=0,
        )
        # Runs on a spawner thread, the one that forked the shell: the guard's audit hook moved this thread into the
        # namespace the shell got (just before the fork) and nothing else runs here until we return.
        self.spawned_in = _spawn_namespace.of_this_thread()
        return proc

    def _start(self) -> None:
        ctl_r, ctl_w = os.pipe()
        try:
            self.proc = spawn(self._popen, ctl_w)
        except OSError as exc:
            os.close(ctl_r)
            raise SandboxError(f"could not start the task's shell ({self.argv + ['bash']}): {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                os.close(ctl_w)
        self._ctl_r = ctl_r
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(ctl_r, False)
        init = "\n".join(
            [
                *(
                    f"ulimit {flag} || echo 'hermes sandbox: could not set ulimit {flag}' >&2"
                    for flag in self.ulimits
                ),
                "trap '__h_to=1; return 124 2>/dev/null' USR1",
                '__h_run() { eval "$1"; }',
                f'__h() {{ __h_n=$1; __h_to=0; __h_bg=$!; __h_run "$2" </dev/null {ctl_w}>&-; __h_rc=$?; '
                '[ "$__h_to" = 1 ] && __h_rc=124; [ "$__h_bg" = "$!" ]; '
                f'printf \'%s:%s:%s:%s\\n\' {self.token} "$__h_n" "$__h_rc" $? >&{ctl_w}; }}',
                "readonly -f __h __h_run",  # a command cannot redefine them for the commands after it
                f"printf '%s:%s:%s\\n' {self.token} ready $$ >&{ctl_w}",
                "",
            ]
        )
        self._idle_nr = None
        self._write(init)
        status, out = self._collect(time.monotonic() + 10.0, start_ticks=None, nonce="ready")
        if status is None:
            output = out.text()[0]
            self._terminate()
            raise SandboxError(
                f"the task's shell did not start (argv {self.argv + ['bash']}); output: {output!r}"
            )
        self._find_shell()
        self._idle_nr = self._learn_idle()
        startup_output = out.text()[0].strip()
        if startup_output:  # e.g. a ulimit the kernel refused: fail loudly rather than run without it
            self._terminate()
            raise SandboxError(f"the task's shell reported a problem while starting: {startup_output}")

    def _write(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        data = text.encode()
        fd = self.proc.stdin.fileno()
        while data:
            n = os.write(fd, data)
            data = data[n:]

    def _syscall(self) -> list[str] | None:
        """The fields of /proc/<shell>/syscall (None: unreadable), through a descriptor kept open from the start
        (a read of it costs about a microsecond, and it never names another process once the shell is gone)."""
        if self._syscall_fd is None:
            if self.shell_pid is None:
                return None
            try:
                self._syscall_fd = os.open(f"/proc/{self.shell_pid}/syscall", os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        try:
            return os.pread(self._syscall_fd, 64, 0).decode("ascii", "replace").split()
        except OSError:
            return None

    def _learn_idle(self) -> str | None:
        """The system call the shell waits in for its next wrapper: ``read`` on fd 0 (None: not observable here,
        e.g. /proc/<pid>/syscall missing; then control lines are taken on their nonce alone)."""
        give_up = time.monotonic() + 2.0
        while time.monotonic() < give_up:
            fields = self._syscall()
            if not fields:
                return None
            if len(fields) >= 2 and fields[1] == "0x0":
                return fields[0]
            time.sleep(0.0005)  # "running", or not yet back in read(0)
        return None

    def _idle(self) -> bool:
        """True when the shell waits for its next wrapper (blocked reading its stdin)."""
        if self._idle_nr is None:
            return True
        # unreadable: the shell is gone (not idle), and the end of its control pipe will say so
        fields = self._syscall()
        return fields is not None and len(fields) >= 2 and fields[0] == self._idle_nr and fields[1] == "0x0"

    def _drain_control(self) -> None:
        """Drop whatever waits in the control pipe (lines a command's programs wrote there between commands)."""
        if self._ctl_r is None:
            return
        while self._read(self._ctl_r):
            pass

    def _collect(
        self, deadline: float, start_ticks: int | None, nonce: str
    ) -> tuple[str | None, CappedOutput]:
        """Read output until the shell's control line for ``nonce`` arrives (status None: the shell died), taken
        only once the shell waits for its next wrapper (see the module docstring). Handles the timeout."""
        assert self.proc is not None and self.proc.stdout is not None and self._ctl_r is not None
        out_fd = self.proc.stdout.fileno()
        ctl_fd = self._ctl_r
        out = CappedOutput(self.max_output)
        ctl = b""
        prefix = f"{self.token}:{nonce}:".encode()
        candidate: str | None = None
        looks = 0
        poller = select.poll()
        poller.register(out_fd, select.POLLIN)
        poller.register(ctl_fd, select.POLLIN)
        out_open = True
        self.timed_out = False
        self.watch_note = None
        killed_at: float | None = None
        watch = self.watch if start_ticks is not None else None
        next_watch = time.monotonic() + _WATCH_EVERY
        while True:
            if candidate is not None:
                if self._idle():
                    if out_open:
                        self._drain(out_fd, out)
                    return candidate, out
                looks += 1
                if looks < _IDLE_SPIN:
                    os.sched_yield()
            now = time.monotonic()
            if watch is not None and killed_at is None and now >= next_watch:
                next_watch = now + _WATCH_EVERY
                note = watch()
                if note is not None:
                    self.watch_note = note
                    self.kill_command(start_ticks)
                    killed_at = now
                    deadline = now + _GRACE
                    continue
            if now >= deadline:
                if killed_at is None and start_ticks is not None:
                    self.timed_out = True
                    self.kill_command(start_ticks)
                    killed_at = now
                    deadline = now + _GRACE
                    continue
                return None, out  # the shell did not come back: the caller replaces it
            wait_until = min(deadline, next_watch) if watch is not None and killed_at is None else deadline
            if candidate is not None:  # look again soon: the shell is on its way back to read(0)
                wait_until = min(wait_until, now + (0.0 if looks < _IDLE_SPIN else 0.001))
            for fd, _event in poller.poll(max(0.0, wait_until - now) * 1000):
                if fd == out_fd:
                    data = self._read(out_fd)
                    if data:
                        out.add(data)
                    elif data is not None:
                        poller.unregister(out_fd)
                        out_open = False
                elif fd == ctl_fd:
                    data = self._read(ctl_fd)
                    if data == b"":
                        if out_open:
                            self._drain(out_fd, out)
                        return None, out
                    if data:
                        ctl += data
                        *lines, ctl = ctl.split(b"\n")
                        # the latest line of this command counts; others are forged or stale
                        for line in lines:
                            if line.startswith(prefix):
                                candidate = line[len(prefix) :].decode("ascii", "replace")
                        ctl = ctl[-4096:]

    @staticmethod
    def _read(fd: int) -> bytes | None:
        try:
            return os.read(fd, _READ)
        except BlockingIOError:
            return None

    def _drain(self, fd: int, out: CappedOutput) -> None:
        while True:
            data = self._read(fd)
            if not data:
                return
            out.add(data)

    # ------------------------------------------------------------ public
    def write_ahead(self, line: str) -> None:
        """Have the shell run ``line`` (silently, no result awaited) before the next command."""
        self._pending += line.rstrip("\n") + "\n"

    def run(self, command: str, timeout: float) -> CommandResult:
        started = time.monotonic()
        with self._lock:
            if self.closed:
                raise SandboxError("the task's shell was closed (sandbox cleaned up).")
            self._busy = True
        try:
            return self._run(command, timeout, started)
        finally:
            with self._lock:
                self._busy = False
                self._cmd_start = None
                if self.closed:  # close() ran meanwhile and left the descriptors to us
                    self._discard()

    def _run(self, command: str, timeout: float, started: float) -> CommandResult:
        with self._lock:
            if self.proc is None or self.proc.poll() is not None:
                self._discard()
                self._start()
        start_ticks = procfs.boot_ticks()  # kernel start times are truncated to ticks of the same clock
        if self._bg_tick is not None and start_ticks <= self._bg_tick:
            # the last command left a background job in this very tick: start in the next one, so a timeout
            # (which kills processes started at or after the command's tick) cannot take that job with it
            time.sleep(
                (self._bg_tick + 1) * procfs.tick_seconds() - time.clock_gettime(time.CLOCK_BOOTTIME) + 0.0005
            )
            start_ticks = procfs.boot_ticks()
        self._bg_tick = None
        self._interrupted = False
        self._cmd_start = start_ticks
        nonce = secrets.token_hex(8)
        wrapper = self._pending + f"__h {nonce} {shlex.quote(command)}\n"
        self._pending = ""
        self._drain_control()
        try:
            self._write(wrapper)
        except OSError:  # the shell died between calls (e.g. killed): start again
            with self._lock:
                self._discard()
                self._start()
            self._write(wrapper)
        status, out = self._collect(started + timeout, start_ticks, nonce)
        self._cmd_start = None
        timed_out = self.timed_out
        interrupted = self._interrupted and not timed_out
        if status is None:  # the shell exited (``exit``), was killed, or ignored the timeout kill
            code = None
            if not (timed_out or interrupted) and self.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):  # let a wrapper (bwrap) pass the code on
                    raw = self.proc.wait(timeout=1)
                    code = 128 - raw if raw < 0 else raw
            terminated = self._terminate()
            code = terminated if code is None else code
            with self._lock:
                if not self.closed:
                    self._discard()
            if timed_out or interrupted:
                code = 124 if timed_out else 130
        else:
            rc, _, bg = status.partition(":")
            try:
                code = int(rc)
            except ValueError:
                code = 1
            if bg == "1":
                self._bg_tick = procfs.boot_ticks()
            if timed_out:
                code = 124
        killed_for = self.watch_note
        if killed_for is not None and not timed_out:
            code = 137
        text, dropped = out.text()
        if killed_for is not None and not timed_out:
            text += (
                f"\n[Command killed: {killed_for}. Remove files the task no longer needs (exit code 137).]"
            )
        elif timed_out:
            text += (
                f"\n[Command timed out after {timeout:g}s and was killed (exit code 124). "
                "Run long jobs in the background or ask for a longer timeout.]"
            )
        elif interrupted:
            text += "\n[Command interrupted: its processes were killed.]"
        elif self.closed:
            text += "\n[The sandbox was cleaned up while the command ran; its processes were killed.]"
        return CommandResult(
            exit_code=code,
            output=text,
            timed_out=timed_out,
            interrupted=interrupted,
            truncated_bytes=dropped,
            duration=time.monotonic() - started,
        )

    def interrupt(self) -> None:
        if self._cmd_start is not None:
            self._interrupted = True
            self.kill_command()

    def _terminate(self) -> int:
        """Kill the whole shell and wait for it; returns its exit code."""
        proc = self.proc
        if proc is None:
            return 0
        self._kill()
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            code = -9
        return 128 - code if code < 0 else code

    def _discard(self) -> None:
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            if self.proc.poll() is None:
                self._terminate()
        if self._ctl_r is not None:
            with contextlib.suppress(OSError):
                os.close(self._ctl_r)
        if self._syscall_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._syscall_fd)
            self._syscall_fd = None
        self.proc = None
        self.shell_pid = None
        self.namespace = None
        self.namespace_init = None
        self.spawned_in = None
        self._ctl_r = None

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            namespaced = self.namespace is not None
            if self.proc is not None:  # a run() in progress sees the shell die and returns
                if namespaced:
                    self._kill()  # the janitor waits for the wrappers (_discard_closed)
                else:
                    self._terminate()
        if not namespaced:
            # without a namespace: processes that left the session (setsid) but kept the environment marker
            for _ in range(3):
                stragglers = procfs.pids_with_marker(self.marker)
                if not stragglers:
                    break
                for pid in stragglers:
                    procfs.kill(pid)
                time.sleep(0.01)
        with self._lock:
            if self._busy:  # run() discards when it returns (its fds stay valid until then)
                return
            if not namespaced:
                self._discard()
                return
        later(
            self._discard_closed
        )  # killed already: waiting for the wrappers to exit is not the caller's job

    def _discard_closed(self) -> None:
        """(janitor) Wait for the killed wrappers and close the pipes. The init's pid is forgotten first: once it
        is reaped (by the host's init) its pid may be reused, so it is never signalled again."""
        with self._lock:
            self.namespace_init = None
            if self.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=5)
            self._discard()
