"""A disk quota per task: the task's folder may hold at most ``max_disk_mb``; a command that goes past it is killed
and what it wrote is removed.

There is no per-folder quota in the kernel that we can count on, so we watch: while a command runs, the shell asks
:meth:`DiskQuota.check` a few times a second, and every command, however short, ends with :meth:`DiskQuota.enforce`.
Both are cheap (one ``statvfs``) until the file system has grown by a step since the last measure; only then is the
task's tree measured (allocated blocks, hard links counted once). When a command left the folder over the quota,
the files it created or changed are removed, largest first, until the folder fits again. The file tools ask
:meth:`DiskQuota.allow` before they write. While a command runs, a burst can overshoot the quota by what it writes in
a quarter of a second; it is removed when the command ends.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

from hermes_envs.errors import SandboxError

__all__ = ["DiskQuota", "DiskQuotaError", "tree_usage"]

_STEP_MAX = 64 * 1024 * 1024
_MIN_INTERVAL = 1.0
_CTIME_SLACK_NS = 20_000_000  # file times come from the kernel's coarse clock, a tick behind time.time_ns()


def _files(root: Path) -> list[tuple[list[str], int, int]]:
    """(parts, allocated bytes, ctime ns) of every regular file under ``root`` (symlinks not followed)."""
    found = []
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for dirpath, _dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top):
            rel = [p for p in dirpath.split("/") if p not in ("", ".")]
            for name in filenames:
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    found.append(([*rel, name], st.st_blocks * 512, st.st_ctime_ns))
    finally:
        os.close(top)
    return found


def _unlink_beneath(root: Path, parts: list[str]) -> bool:
    """Remove the file ``root/parts`` walking down by descriptors without following a link; False if it is gone."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)]
    try:
        for part in parts[:-1]:
            fds.append(
                os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fds[-1])
            )
        st = os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return False
        os.unlink(parts[-1], dir_fd=fds[-1])
        return True
    except OSError:
        return False
    finally:
        for fd in fds:
            os.close(fd)


class DiskQuotaError(SandboxError, OSError):
    """A write would take the task's folder past its disk quota (``max_disk_mb``)."""


def tree_usage(root: Path) -> int:
    """Bytes allocated under ``root`` (symlinks not followed, each inode counted once)."""
    total, seen = 0, set()
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for _dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top):
            for name in (*dirnames, *filenames):
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode) or (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    finally:
        os.close(top)
    return total


class DiskQuota:
    """Watches one task's folder against ``limit`` bytes."""

    def __init__(self, root: Path, limit: int):
        self.root = root
        self.limit = limit
        self.step = max(1, min(_STEP_MAX, limit // 8))
        self.usage = 0  # as last measured (a fresh task's folder is empty)
        self._fs_at_measure = self._fs_used()
        self._measured_at = 0.0
        self._lock = threading.Lock()

    def _fs_used(self) -> int:
        try:
            st = os.statvfs(self.root)
        except OSError:
            return 0
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def measure(self, *, force: bool = False) -> int:
        """The folder's usage now, measured when the file system grew by a step (or ``force``)."""
        with self._lock:
            fs = self._fs_used()
            now = time.monotonic()
            # moved by a step either way: the file system is shared, so another process removing files while
            # the task writes can hide the task's growth in a net shrink (a 100 MB write during a 1 GB removal)
            moved = abs(fs - self._fs_at_measure) >= self.step
            if force or (moved and now - self._measured_at >= _MIN_INTERVAL):
                try:
                    self.usage = tree_usage(self.root)
                except OSError:
                    return self.usage
                self._fs_at_measure, self._measured_at = fs, now
            return self.usage

    def enforce(self, since_ns: int, measure: bool = False) -> tuple[int, list[tuple[list[str], int]]] | None:
        """After a command that started at ``since_ns`` (``time.time_ns()``): None when the folder fits its quota,
        else (the usage found, [(parts below the root, bytes) of each file removed]): the regular files created or
        changed since then, largest first, until the folder fits (the command's own writes: older files stay).
        ``measure`` walks the tree whatever the file system says (the reward's verification commands: few, and a
        quota they miss would let a verdict stand on files that should be gone)."""
        with self._lock:
            fs = self._fs_used()
            grown = measure or abs(fs - self._fs_at_measure) >= self.step or self.usage > self.limit
        usage = self.measure(force=grown)
        if usage <= self.limit:
            return None
        cutoff = since_ns - _CTIME_SLACK_NS
        recent = sorted(
            (item for item in _files(self.root) if item[2] >= cutoff), key=lambda item: item[1], reverse=True
        )
        removed: list[tuple[list[str], int]] = []
        left = usage
        for parts, size, _ctime in recent:
            if left <= self.limit:
                break
            if _unlink_beneath(self.root, parts):
                removed.append((parts, size))
                left -= size
        self.measure(force=True)
        return usage, removed

    def _message(self, usage: int) -> str:
        return (
            f"the task's files use {usage / 2**20:.0f} MB, over its disk quota of {self.limit / 2**20:.0f} MB "
            "(max_disk_mb)"
        )

    def check(self) -> str | None:
        """A statement of the excess when the folder is over quota, else None (called while a command runs)."""
        usage = self.measure()
        return self._message(usage) if usage > self.limit else None

    def allow(self, size: int, what: str) -> None:
        """Raise DiskQuotaError when writing ``size`` more bytes would take the folder past the quota."""
        usage = self.measure(force=self.usage + size > self.limit)
        if usage + size > self.limit:
            raise DiskQuotaError(
                f"writing {what!r} ({size} bytes) should keep the task within its disk quota; {self._message(usage)}. "
                "Fix: remove files the task no longer needs, or raise max_disk_mb."
            )
        with self._lock:  # counted at once (the next measure corrects it): the next write sees this one
            self.usage += size
