"""The local backends: a persistent bash per task, run directly (``local``) or inside bubblewrap (``bwrap``).

How a command runs: the task's bash reads wrapper lines on its stdin. Each wrapper runs the command in the shell
itself (so ``cd`` and ``export`` persist), with stdin from /dev/null, stdout and stderr into one pipe that we read,
and then writes ``<token>:<exit code>`` to a private control pipe that the command cannot write to. On timeout we
signal the shell (a USR1 trap makes it abandon the rest of the command) and SIGKILL every process of the task's
session that started after the command did: the command's processes die, the shell and earlier background jobs stay.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from hermes_envs.errors import ConfigError, SandboxError

from . import CommandResult, SandboxBackend, register_backend

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_READ = 65536
_GRACE = 2.0  # seconds the shell gets to come back after a timeout kill before it is replaced


def _boot_ticks() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _CLK_TCK)


def _proc_stat(pid: int) -> tuple[int, int, int] | None:
    """(ppid, session id, start time in ticks) of ``pid`` or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2 :].split()
    try:
        return int(rest[1]), int(rest[3]), int(rest[19])
    except (IndexError, ValueError):
        return None


def _session_members(sid: int) -> dict[int, int]:
    """pid -> start ticks of every process in session ``sid``."""
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = _proc_stat(int(name))
        if st is not None and st[1] == sid:
            found[int(name)] = st[2]
    return found


def _pids_with_marker(marker: bytes) -> list[int]:
    """Processes whose environment holds ``marker`` (catches those that left the session with setsid)."""
    me = os.getpid()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if marker in f.read():
                    pids.append(int(name))
        except OSError:
            continue
    return pids


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


class _Output:
    """Keeps the first ``head`` and last ``tail`` bytes of a stream and counts what was dropped between them."""

    def __init__(self, cap: int):
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self) -> tuple[str, int]:
        if len(self.tail) > self.tail_cap:
            del self.tail[: len(self.tail) - self.tail_cap]
        dropped = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        if dropped <= 0:
            return head + self.tail.decode("utf-8", errors="replace"), 0
        tail = self.tail.decode("utf-8", errors="replace")
        note = (
            f"\n\n[... output truncated: {dropped} of {self.total} bytes omitted from the middle; "
            f"the first {len(self.head)} and last {len(self.tail)} bytes are shown. "
            "Redirect to a file and read parts of it (head, tail, grep) to see more ...]\n\n"
        )
        return head + note + tail, dropped


class PersistentShell:
    """One long-lived bash per task; see the module docstring for the protocol."""

    def __init__(
        self, argv: list[str], workdir: Path, env: dict[str, str], ulimits: list[str], max_output: int
    ):
        self.argv = argv
        self.workdir = workdir
        self.env = env
        self.ulimits = ulimits
        self.max_output = max_output
        self.token = "__hermes_done_" + secrets.token_hex(8)
        self.marker = ("HERMES_SANDBOX_ID=" + secrets.token_hex(8)).encode()
        self.env = dict(env, HERMES_SANDBOX_ID=self.marker.split(b"=", 1)[1].decode())
        self.proc: subprocess.Popen[bytes] | None = None
        self.shell_pid: int | None = None
        self._ctl_r: int | None = None
        self._cmd_start: int | None = None
        self._interrupted = False
        self._infra: set[int] = set()
        self._busy = False
        self._bg_tick: int | None = None
        self._lock = threading.Lock()  # guards proc / fds against close() from another thread
        self.closed = False

    # ------------------------------------------------------------ process
    def _start(self) -> None:
        ctl_r, ctl_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
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
        except OSError as exc:
            os.close(ctl_r)
            os.close(ctl_w)
            raise SandboxError(f"could not start the task's shell ({self.argv + ['bash']}): {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                os.close(ctl_w)
        self._ctl_r = ctl_r
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(ctl_r, False)
        self._ctl_fd_in_shell = ctl_w
        init = "\n".join(
            [
                *(
                    f"ulimit {flag} || echo 'hermes sandbox: could not set ulimit {flag}' >&2"
                    for flag in self.ulimits
                ),
                "trap '__h_to=1; return 124 2>/dev/null' USR1",
                '__h_run() { eval "$1"; }',
                f'__h() {{ __h_to=0; __h_bg=$!; __h_run "$1" </dev/null {ctl_w}>&-; __h_rc=$?; '
                '[ "$__h_to" = 1 ] && __h_rc=124; [ "$__h_bg" = "$!" ]; '
                f"printf '%s:%s:%s\\n' {self.token} \"$__h_rc\" $? >&{ctl_w}; }}",
                f"printf '%s:%s:%s\\n' {self.token} ready $$ >&{ctl_w}",
                "",
            ]
        )
        self._write(init)
        status, out = self._collect(time.monotonic() + 10.0, start_ticks=None)
        if status is None or not status.startswith("ready"):
            output = out.text()[0]
            self._terminate()
            raise SandboxError(
                f"the task's shell did not start (argv {self.argv + ['bash']}); output: {output!r}"
            )
        self.shell_pid = self._find_shell_pid()
        # the shell and its wrappers (bwrap's processes): never killed by a command timeout
        self._infra = set(_session_members(self.proc.pid)) | {self.proc.pid, self.shell_pid}
        startup_output = out.text()[0].strip()
        if startup_output:  # e.g. a ulimit the kernel refused: fail loudly rather than run without it
            self._terminate()
            raise SandboxError(f"the task's shell reported a problem while starting: {startup_output}")

    def _find_shell_pid(self) -> int:
        assert self.proc is not None
        if not self.argv:
            return self.proc.pid
        # wrapped (bwrap): the shell is the newest process of the session named bash
        members = _session_members(self.proc.pid)
        for pid in sorted(members, key=members.get, reverse=True):
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == "bash":
                        return pid
            except OSError:
                continue
        return self.proc.pid

    def _write(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        data = text.encode()
        fd = self.proc.stdin.fileno()
        while data:
            n = os.write(fd, data)
            data = data[n:]

    def _collect(self, deadline: float, start_ticks: int | None) -> tuple[str | None, _Output]:
        """Read output until the control line arrives (status None: the shell died). Handles the timeout."""
        assert self.proc is not None and self.proc.stdout is not None and self._ctl_r is not None
        out_fd = self.proc.stdout.fileno()
        ctl_fd = self._ctl_r
        out = _Output(self.max_output)
        ctl = b""
        poller = select.poll()
        poller.register(out_fd, select.POLLIN)
        poller.register(ctl_fd, select.POLLIN)
        out_open = True
        self.timed_out = False
        killed_at: float | None = None
        while True:
            now = time.monotonic()
            if now >= deadline:
                if killed_at is None and start_ticks is not None:
                    self.timed_out = True
                    self.kill_command(start_ticks)
                    killed_at = now
                    deadline = now + _GRACE
                    continue
                return None, out  # the shell did not come back: the caller replaces it
            for fd, _event in poller.poll(max(0.0, deadline - now) * 1000):
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
                        if b"\n" in ctl:
                            line = ctl.split(b"\n", 1)[0].decode()
                            if out_open:
                                self._drain(out_fd, out)
                            prefix = self.token + ":"
                            return (line[len(prefix) :] if line.startswith(prefix) else "?"), out

    @staticmethod
    def _read(fd: int) -> bytes | None:
        try:
            return os.read(fd, _READ)
        except BlockingIOError:
            return None

    def _drain(self, fd: int, out: _Output) -> None:
        while True:
            data = self._read(fd)
            if not data:
                return
            out.add(data)

    # ------------------------------------------------------------ public
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
        start_ticks = _boot_ticks()  # kernel start times are truncated to ticks of the same clock
        if self._bg_tick is not None and start_ticks <= self._bg_tick:
            # the last command left a background job in this very tick: start in the next one, so a timeout
            # (which kills processes started at or after the command's tick) cannot take that job with it
            time.sleep((self._bg_tick + 1) / _CLK_TCK - time.clock_gettime(time.CLOCK_BOOTTIME) + 0.0005)
            start_ticks = _boot_ticks()
        self._bg_tick = None
        self._interrupted = False
        self._cmd_start = start_ticks
        wrapper = f"__h {shlex.quote(command)}\n"
        try:
            self._write(wrapper)
        except OSError:  # the shell died between calls (e.g. killed): start again
            with self._lock:
                self._discard()
                self._start()
            self._write(wrapper)
        status, out = self._collect(started + timeout, start_ticks)
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
                self._bg_tick = _boot_ticks()
            if timed_out:
                code = 124
        text, dropped = out.text()
        if timed_out:
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
            victims = [
                pid
                for pid, started in _session_members(proc.pid).items()
                if started >= start_ticks and pid not in self._infra
            ]
            if not victims:
                return
            for pid in victims:
                _kill(pid)
            time.sleep(0.005)

    def interrupt(self) -> None:
        if self._cmd_start is not None:
            self._interrupted = True
            self.kill_command()

    def _terminate(self) -> int:
        """Kill the whole shell (session, then stragglers by marker); returns its exit code."""
        proc = self.proc
        if proc is None:
            return 0
        members = list(_session_members(proc.pid))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in members:
            _kill(pid)
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
        self.proc = None
        self.shell_pid = None
        self._ctl_r = None

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if self.proc is not None:
                self._terminate()  # a run() in progress sees the shell die and returns
        # processes that escaped the session (setsid, daemons) but kept the sandbox's environment marker
        for _ in range(3):
            stragglers = _pids_with_marker(self.marker)
            if not stragglers:
                break
            for pid in stragglers:
                _kill(pid)
            time.sleep(0.01)
        with self._lock:
            if not self._busy:  # else run() discards when it returns (its fds stay valid until then)
                self._discard()


def _ulimit_flags(config) -> list[str]:
    flags = []
    if (
        config.cpu_seconds is not None
    ):  # soft limit first sends SIGXCPU (exit 152); the hard one a second later
        flags.append(f"-S -t {int(config.cpu_seconds)}")
        flags.append(f"-H -t {int(config.cpu_seconds) + 1}")
    if config.memory_mb is not None:
        flags.append(f"-v {int(config.memory_mb) * 1024}")
    if config.max_processes is not None:
        flags.append(f"-u {int(config.max_processes)}")
    if config.max_file_size_mb is not None:
        flags.append(f"-f {int(config.max_file_size_mb) * 1024}")
    return flags


@register_backend
class LocalBackend(SandboxBackend):
    """A persistent bash on this machine, in the task's folder, with a scrubbed environment and rlimits."""

    name = "local"

    def __init__(self, workdir, config, env):
        super().__init__(workdir, config, env)
        self.shell = PersistentShell(
            self._argv(), workdir, env, _ulimit_flags(config), config.max_output_bytes
        )

    def _argv(self) -> list[str]:
        return []

    def run(self, command: str, timeout: float) -> CommandResult:
        return self.shell.run(command, timeout)

    def interrupt(self) -> None:
        self.shell.interrupt()

    def close(self) -> None:
        self.shell.close()


_bwrap_checked: str | None = None


@register_backend
class BwrapBackend(LocalBackend):
    """The local shell inside bubblewrap: read-only system, private /tmp, only the task's folder writable,
    other tasks' folders hidden, own PID namespace (and, with ``network=False``, no network)."""

    name = "bwrap"

    @classmethod
    def check_available(cls) -> None:
        global _bwrap_checked
        if _bwrap_checked == "ok":
            return
        exe = shutil.which("bwrap")
        if exe is None:
            raise ConfigError(
                "terminal_backend 'bwrap' should find bubblewrap installed; got no 'bwrap' on PATH. "
                "Fix: install it (Debian/Ubuntu: apt-get install bubblewrap) or use terminal_backend='local'."
            )
        probe = subprocess.run(
            [exe, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "true"],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            raise ConfigError(
                f"terminal_backend 'bwrap' should be able to create namespaces; got: {probe.stderr.strip()!r}. "
                "Fix: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as "
                "root, or use terminal_backend='local'."
            )
        _bwrap_checked = "ok"

    def __init__(self, workdir, config, env):
        self.check_available()
        super().__init__(workdir, config, env)

    def _argv(self) -> list[str]:
        wd = str(self.workdir)
        root = str(self.workdir.parent)
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        # A private /tmp would also hide a Python (a venv, a checkout) that lives under /tmp: keep it visible,
        # read-only, so tools can still run the trainer's own interpreter.
        for keep in _python_dirs_under_tmp():
            argv += ["--ro-bind", keep, keep]
        argv += ["--tmpfs", root]  # other tasks' folders are not visible
        argv += ["--bind", wd, wd, "--chdir", wd, "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not self.config.network:
            argv += ["--unshare-net"]
        return argv


def _python_dirs_under_tmp() -> list[str]:
    """Folders of the running Python (prefix, base prefix, executable's folder) that lie under /tmp."""

    found: list[str] = []
    for path in (sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))):
        real = os.path.realpath(path)
        if real.startswith("/tmp/") and not any(real == f or real.startswith(f + "/") for f in found):
            found.append(real)
    return found
