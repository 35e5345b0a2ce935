"""Which files the env's reward and prompt code touch, seen through Python's audit hooks (PEP 578).

While :meth:`FileAudit.watching` is active on a thread, ``open``, ``os.listdir``, ``os.scandir``, ``os.remove``,
``os.rename``, ``os.mkdir`` and ``shutil`` copies made by that thread are recorded, and :func:`private_violation`
decides whether a path breaks the rollout's privacy: a relative path (it resolves against the trainer's working
directory, which every rollout shares), a path in the temp folder or another task's sandbox, or a write anywhere
outside the rollout's own sandbox. Imports and reads of shared read-only data (an absolute path to the env's own
files, a dataset, installed packages) are not reported.

An audit hook cannot be removed, so one hook is installed on first use and does nothing while nothing is watched.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pth", ".pyi")
_EVENTS = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.remove",
        "os.mkdir",
        "os.rmdir",
        "os.rename",
        "shutil.copyfile",
        "shutil.move",
    }
)


@dataclass(frozen=True)
class Access:
    """One file-system access: the event, the path as given, whether it writes, and the phase it happened in."""

    event: str
    path: str
    write: bool
    phase: str


class FileAudit:
    """Records the file accesses of the thread that called :meth:`watching`."""

    _hook_installed = False
    _active: FileAudit | None = None

    def __init__(self) -> None:
        self.accesses: list[Access] = []
        self._thread = 0
        self._phase = ""

    @classmethod
    def _install(cls) -> None:
        if not cls._hook_installed:
            sys.addaudithook(_hook)
            cls._hook_installed = True

    @contextlib.contextmanager
    def watching(self, phase: str) -> Iterator[FileAudit]:
        """Record this thread's file accesses within the block under ``phase``."""
        self._install()
        previous = (FileAudit._active, self._thread, self._phase)
        FileAudit._active, self._thread, self._phase = self, threading.get_ident(), phase
        try:
            yield self
        finally:
            FileAudit._active, self._thread, self._phase = previous

    def _record(self, event: str, path: object, write: bool) -> None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            return
        self.accesses.append(Access(event, path, write, self._phase))


_STDLIB = os.path.dirname(os.__file__)
_FRAMEWORK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools") + os.sep


def _from_framework() -> bool:
    """True when the access is made by hermes-envs' own sandbox code (creating the sandbox root, say), not the env.

    The first frame outside the standard library decides: ``tempfile.mkdtemp`` called by our sandbox is ours, an
    ``open`` or ``shutil.copy`` called by the env's reward is the env's.
    """
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_FRAMEWORK):
            return True
        if not filename.startswith(_STDLIB) and not filename.startswith("<"):
            return False
        frame = frame.f_back
    return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    audit = FileAudit._active
    if audit is None or threading.get_ident() != audit._thread:
        return
    try:
        if event in _EVENTS and _from_framework():
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if isinstance(path, int):
                return  # os.fdopen of a descriptor: the open was recorded already
            write = bool(isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            audit._record(event, path, write)
        elif event in ("os.listdir", "os.scandir"):
            audit._record(event, args[0] if args else ".", False)
        elif event in ("os.remove", "os.mkdir", "os.rmdir"):
            audit._record(event, args[0], True)
        elif event in ("os.rename", "shutil.copyfile", "shutil.move"):
            audit._record(event, args[0], False)
            audit._record(event, args[1], True)
    except Exception:
        return


def _inside(path: str, root: str | None) -> bool:
    if not root:
        return False
    return path == root or path.startswith(root.rstrip("/") + "/")


def private_violation(
    access: Access, *, sandbox: str | None, sandbox_root: str | None, cwd: str
) -> str | None:
    """Why ``access`` breaks the rollout's privacy (a short reason), or None when it is fine."""
    raw = access.path
    if raw in (".", "") and access.event in ("os.listdir", "os.scandir"):
        return f"it lists the trainer's working directory {cwd}, which every rollout shares"
    if raw.startswith("/dev/") or raw.endswith(_CODE_SUFFIXES) or "/__pycache__/" in raw:
        return None
    absolute = os.path.abspath(raw)
    if _inside(absolute, sandbox):
        return None
    if not os.path.isabs(raw):
        return (
            f"the relative path {raw!r} resolves against the trainer's working directory ({absolute}), "
            "which every rollout shares"
        )
    if _inside(absolute, sandbox_root):
        return "it is in another task's sandbox"
    temp = os.path.realpath(tempfile.gettempdir())
    if _inside(absolute, temp) or _inside(os.path.realpath(absolute), temp):
        return f"it is in the shared temp folder {temp}, not in the rollout's sandbox"
    if access.write:
        return "it writes outside the rollout's sandbox"
    return None  # reading shared, read-only data (the env's folder, installed files, a dataset) is fine


def sandbox_of(task_id: str) -> tuple[str | None, str | None]:
    """(the workdir of ``task_id``'s sandbox, the folder holding every sandbox), when hermes-envs made one."""
    from hermes_envs.tools.sandbox import get_sandbox

    box = get_sandbox(task_id, create=False)
    if box is None:
        return None, None
    return str(box.workdir), str(Path(box.tree).parent)


__all__ = ["Access", "FileAudit", "private_violation", "sandbox_of"]
