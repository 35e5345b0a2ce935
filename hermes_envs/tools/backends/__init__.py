"""Sandbox backends: how a task's commands are run.

A backend is created per sandbox (per task) with the task's host working directory, the sandbox settings and the
scrubbed environment. It has to run a command with a timeout and return a :class:`CommandResult`, interrupt the
command running now, and release everything on :meth:`SandboxBackend.close`. The file tools work on the host working
directory, so a remote backend (docker, modal) would mount or sync that folder; see ``docs/sandbox.md``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ..sandbox import SandboxConfig

__all__ = [
    "BACKENDS",
    "CommandResult",
    "SandboxBackend",
    "available_backends",
    "register_backend",
]


@dataclass
class CommandResult:
    """What one command did. ``output`` holds stdout and stderr merged, capped (head and tail kept)."""

    exit_code: int
    output: str
    timed_out: bool = False
    interrupted: bool = False
    truncated_bytes: int = 0
    duration: float = 0.0

    @property
    def error(self) -> str | None:
        """A short statement of what went wrong beyond the exit code (timeout, interruption), else None."""
        if self.timed_out:
            return "Command timed out; its processes were killed (exit code 124)."
        if self.interrupted:
            return "Command interrupted; its processes were killed."
        return None


class SandboxBackend(ABC):
    """The small interface every backend implements (one instance per task)."""

    name: ClassVar[str]

    def __init__(self, workdir: Path, config: SandboxConfig, env: dict[str, str]):
        self.workdir = workdir
        self.config = config
        self.env = env

    @classmethod
    def check_available(cls) -> None:
        """Raise ConfigError with the fix when this backend cannot run on this machine (default: available)."""
        return None

    @abstractmethod
    def run(self, command: str, timeout: float) -> CommandResult:
        """Run ``command`` (a shell command line) in the task's shell; never raise for a failing command."""

    @abstractmethod
    def interrupt(self) -> None:
        """Kill the command running now, if any (called from another thread); the shell survives."""

    @abstractmethod
    def close(self) -> None:
        """Kill every process of the task. Idempotent."""


BACKENDS: dict[str, type[SandboxBackend]] = {}


def register_backend(cls: type[SandboxBackend]) -> type[SandboxBackend]:
    """Class decorator: make ``cls`` selectable as ``terminal_backend=cls.name``."""
    from hermes_envs.errors import ConfigError

    existing = BACKENDS.get(cls.name)
    if existing is not None and existing is not cls:
        raise ConfigError(
            f"sandbox backend {cls.name!r} is already registered by {existing.__module__}.{existing.__qualname__}; "
            f"got a second one from {cls.__module__}.{cls.__qualname__}. Fix: pick another name."
        )
    BACKENDS[cls.name] = cls
    return cls


def available_backends() -> list[str]:
    return sorted(BACKENDS)


from . import local as _local  # noqa: E402,F401  (registers "local" and "bwrap")
