"""What every sandbox backend is: the :class:`SandboxBackend` interface, its :class:`CommandResult`, the registry.

A backend is created per sandbox (per task) with the task's host working directory, the sandbox settings and the
environment its commands get. It runs a command with a timeout, interrupts the command running now, and releases
everything on :meth:`SandboxBackend.close`. This module imports nothing from the backends that implement it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from hermes_envs._registry import Registry

if TYPE_CHECKING:
    from .._sandbox_config import SandboxConfig

__all__ = ["CommandResult", "SandboxBackend", "available_backends", "backends", "register_backend"]


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
    """The small interface every backend implements (one instance per task).

    ``container_paths``: absolute paths given to the file tools resolve inside the task's own root folder (as in a
    container, where ``/workspace`` and ``/tests`` belong to the task) instead of being refused.
    ``links_confined``: the backend's commands cannot hard-link files from outside the task's folder (so the file
    tools may read files with several links).
    """

    name: ClassVar[str]
    container_paths: ClassVar[bool] = False
    links_confined: ClassVar[bool] = False

    def __init__(self, workdir: Path, config: SandboxConfig, env: dict[str, str]):
        self.workdir = workdir
        self.config = config
        self.env = env

    @classmethod
    def check_available(cls) -> None:
        """Raise ConfigError with the fix when this backend cannot run on this machine (default: available)."""
        return None

    @classmethod
    def stands_in_for(cls, name: str) -> type[SandboxBackend]:
        """The backend that really runs when ``name`` is asked for (a stand-in may pick another); default: itself."""
        return cls

    def prepare(self) -> None:
        """Start whatever the first command needs (a shell, a container) ahead of it; default: nothing."""
        return None

    def export(self, variables: dict[str, str]) -> None:
        """Set ``variables`` for the next commands (a pre-started sandbox handed to its task); default: nothing."""
        return None

    @property
    def spawned_in(self) -> str | None:
        """The network namespace the process that runs this task's commands was forked in (``None``: none runs
        yet, or each command starts its own process where it is called); a pre-started sandbox goes only to a task
        that would get the same one."""
        return None

    @abstractmethod
    def run(self, command: str, timeout: float) -> CommandResult:
        """Run ``command`` (a shell command line) in the task's shell; never raise for a failing command."""

    def shell_path(self, host: Path) -> str:
        """How the task's commands name ``host`` (a path in the task's folder): the host path itself by default; a
        backend whose commands see the task's root as ``/`` says ``/workspace/...``."""
        return str(host)

    def run_fresh(self, command: str, timeout: float) -> CommandResult:
        """Run ``command`` in a shell the task's earlier commands never touched (same files; no functions, aliases,
        variables, working directory or traps of theirs), for the reward's :class:`ToolContext`. The default is
        :meth:`run`, right for a backend that starts a new process per command and keeps nothing between them; a
        backend with a persistent shell overrides it."""
        return self.run(command, timeout)

    @abstractmethod
    def interrupt(self) -> None:
        """Kill the command running now, if any (called from another thread); the shell survives."""

    @abstractmethod
    def close(self) -> None:
        """Kill every process of the task. Idempotent."""


backends: Registry[type[SandboxBackend]] = Registry("sandbox backend")


def register_backend(cls: type[SandboxBackend]) -> type[SandboxBackend]:
    """Class decorator: make ``cls`` selectable as ``terminal_backend=cls.name``."""
    backends.register(cls.name, cls)
    return cls


def available_backends() -> list[str]:
    """Every name ``terminal_backend`` accepts, sorted."""
    return backends.names()
