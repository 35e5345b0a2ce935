"""The settings of sandboxes (:class:`SandboxConfig`) and the environment their commands get.

Commands get an ALLOW-listed environment: a few harmless variables of the trainer (``PATH``, ``HOME``, ``LANG``,
``LC_*``, ``TERM``, ``TZ`` ...) plus the variables the env declares (``env_passthrough`` names, ``env`` values).
Everything else (provider keys, ``DATABASE_URL``, ``SSH_AUTH_SOCK``, cookies, webhooks ...) stays out, whatever it
is called: name-based scrubbing cannot know every secret's name.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from hermes_envs.errors import ConfigError

__all__ = ["DEFAULT_ENV_ALLOW", "SandboxConfig", "sandbox_environment"]

# Variables passed from the trainer to every command (shell patterns); an env adds its own via env_passthrough.
DEFAULT_ENV_ALLOW = ("PATH", "HOME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "USER", "LOGNAME", "SHELL")


@dataclass(frozen=True)
class SandboxConfig:
    """Settings shared by every sandbox created after :func:`~hermes_envs.tools.configure_sandboxes`.

    ``timeout`` is the default per-command timeout in seconds, ``max_timeout`` the largest one a caller may ask for;
    ``lifetime`` is how long (seconds) a sandbox may stay idle before the reaper cleans it up. Resource limits apply
    to every process the sandbox starts (``None`` = no limit); the defaults fit a real task (a test suite, a build,
    a package install) and stop a runaway one: ``cpu_seconds`` (CPU time per process), ``memory_mb`` (address
    space per process, 16 GiB), ``max_processes`` (RLIMIT_NPROC, 4096; not enforced for root), ``max_file_size_mb``
    (largest file a command or a file tool may write, 1 GiB), ``max_disk_mb`` (what the task's folder may hold,
    10 GiB: a command that goes past it is killed, a file-tool write refused). ``max_output_bytes`` caps the output kept per
    command. ``pid_namespace``: run commands in their own PID namespace where one can be had (the default; a
    warning says so once where none can). ``env_passthrough``: names (shell patterns) of trainer variables
    commands may see besides the default allow-list; ``env``: variables set for every command. ``prestart``:
    how many shells are kept started ahead of new tasks (each is used by one task only). ``image``: the Docker
    image of the ``docker`` backend.
    """

    backend: str = "local"
    timeout: float = 120.0
    max_timeout: float = 600.0
    lifetime: float = 3600.0
    root: Path | None = None
    cpu_seconds: int | None = None
    memory_mb: int | None = 16384
    max_processes: int | None = 4096
    max_file_size_mb: int | None = 1024
    max_disk_mb: int | None = 10240
    max_output_bytes: int = 50_000
    network: bool = True  # bwrap/container only: False gives the sandbox its own empty network namespace
    pid_namespace: bool = True
    env_passthrough: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    prestart: int = 2
    image: str = "python:3.11-slim"

    def __post_init__(self) -> None:
        if not isinstance(self.backend, str) or not self.backend:
            raise ConfigError(f"terminal_backend should be a backend name; got {self.backend!r}.")
        for name in ("timeout", "max_timeout", "lifetime"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ConfigError(f"sandbox {name} should be a positive number of seconds; got {value!r}.")
        for name in ("cpu_seconds", "memory_mb", "max_processes", "max_file_size_mb", "max_disk_mb"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                raise ConfigError(f"sandbox limit {name} should be a positive int or None; got {value!r}.")
        if not isinstance(self.max_output_bytes, int) or self.max_output_bytes < 200:
            raise ConfigError(f"max_output_bytes should be an int >= 200; got {self.max_output_bytes!r}.")
        if (
            not isinstance(self.prestart, int)
            or isinstance(self.prestart, bool)
            or not 0 <= self.prestart <= 64
        ):
            raise ConfigError(f"sandbox prestart should be an int from 0 to 64; got {self.prestart!r}.")
        passthrough = (
            (self.env_passthrough,) if isinstance(self.env_passthrough, str) else self.env_passthrough
        )
        if not all(isinstance(n, str) and n for n in passthrough):
            raise ConfigError(
                f"env_passthrough should be a list of variable names; got {self.env_passthrough!r}. "
                "Fix: pass names such as ['MY_DATASET_DIR']."
            )
        object.__setattr__(self, "env_passthrough", tuple(passthrough))
        if not isinstance(self.env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise ConfigError(f"sandbox env should map variable names to str values; got {self.env!r}.")
        object.__setattr__(self, "env", dict(self.env))

    @property
    def max_file_bytes(self) -> int | None:
        return None if self.max_file_size_mb is None else self.max_file_size_mb * 1024 * 1024


SETTING_NAMES = {f.name for f in fields(SandboxConfig)} - {"backend", "timeout", "lifetime", "root"}


def sandbox_environment(config: SandboxConfig, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``base`` (default: ``os.environ``) that commands may see under ``config``, plus its env."""
    source = os.environ if base is None else base
    allowed = _allow_pattern((*DEFAULT_ENV_ALLOW, *config.env_passthrough)).fullmatch
    env = {k: v for k, v in source.items() if allowed(k)}
    env.update(config.env)
    return env


@functools.lru_cache(maxsize=64)
def _allow_pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled regex for the shell patterns (fnmatch per name and pattern cost a pre-started shell ~1 ms)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
