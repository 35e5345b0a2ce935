"""What /proc says about the processes a task's shell started: sessions, PID namespaces, start times; and killing.

The trainer sees every process of a sandbox in its own /proc, even those inside the sandbox's PID namespace, so a
timeout or a cleanup can find a command's processes by namespace (which ``setsid`` cannot leave) and start time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

__all__ = [
    "alive",
    "boot_ticks",
    "children",
    "comm",
    "descendants_until",
    "kill",
    "namespace_init",
    "namespace_members",
    "pid_namespace",
    "pids_with_marker",
    "proc_stat",
    "session_members",
    "tick_seconds",
]

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def boot_ticks() -> int:
    """Now, in the clock ticks the kernel stamps process start times with."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _CLK_TCK)


def tick_seconds() -> float:
    return 1.0 / _CLK_TCK


def proc_stat(pid: int) -> tuple[int, int, int] | None:
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


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def session_members(sid: int) -> dict[int, int]:
    """pid -> start ticks of every process in session ``sid``."""
    found: dict[int, int] = {}
    for pid in _pids():
        st = proc_stat(pid)
        if st is not None and st[1] == sid:
            found[pid] = st[2]
    return found


def children(pid: int) -> list[int] | None:
    """The child pids of ``pid`` (its main thread's), or None when the kernel does not list them (no
    CONFIG_PROC_CHILDREN) or ``pid`` is gone. One small read, where a session scan reads every process's stat."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return None


def descendants_until(pid: int, name: str, depth: int = 4) -> list[int] | None:
    """The chain of pids from ``pid`` down to its first descendant called ``name`` (``pid`` included), following
    each wrapper's children (bwrap, unshare); None when the kernel does not list children or none is found."""
    level = [pid]
    parents: dict[int, int] = {}
    for _ in range(depth):
        below: list[int] = []
        for p in level:
            kids = children(p)
            if kids is None:
                return None
            for kid in kids:
                parents[kid] = p
                if comm(kid) == name:
                    chain = [kid]
                    while chain[0] != pid:
                        chain.insert(0, parents[chain[0]])
                    return chain
            below += kids
        if not below:
            return None
        level = below
    return None


def comm(pid: int) -> str | None:
    """The command name of ``pid`` (``/proc/PID/comm``), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def pid_namespace(pid: int) -> str | None:
    """The PID namespace of ``pid`` (``'pid:[4026531836]'``), or None when it is gone or hidden."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def namespace_members(ns: str) -> dict[int, int]:
    """pid -> start ticks of every process in the PID namespace ``ns`` (as seen from ours)."""
    found: dict[int, int] = {}
    for pid in _pids():
        if pid_namespace(pid) == ns:
            st = proc_stat(pid)
            if st is not None:
                found[pid] = st[2]
    return found


def namespace_init(ns: str, candidates: list[int]) -> int | None:
    """The host pid of PID 1 of namespace ``ns`` among ``candidates`` (killing it kills the whole namespace)."""
    for pid in candidates:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("NSpid:"):
                        ids = line.split()[1:]
                        if ids and ids[-1] == "1" and pid_namespace(pid) == ns:
                            return pid
                        break
        except OSError:
            continue
    return None


def pids_with_marker(marker: bytes) -> list[int]:
    """Processes whose environment holds ``marker`` (finds those that left the session, without a namespace)."""
    me = os.getpid()
    pids = []
    for pid in _pids():
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker in f.read():
                    pids.append(pid)
        except OSError:
            continue
    return pids


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] != b"Z"
