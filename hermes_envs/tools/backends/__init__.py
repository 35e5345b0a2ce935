"""Sandbox backends: how a task's commands are run.

The interface and the registry live in :mod:`.base` (which imports no backend); this facade imports the built-in
backends once so they register: ``local`` and ``bwrap`` (:mod:`.local`), ``container`` and the stand-ins for
upstream's ``modal``, ``singularity``, ``daytona``, ``ssh``, ``vercel_sandbox`` (:mod:`.container`), and
``docker`` (:mod:`.docker`). What each isolates is written down in ``docs/sandbox.md``.
"""

from __future__ import annotations

from . import container as _container  # noqa: F401  (registers "container" and the stand-ins)
from . import docker as _docker  # noqa: F401  (registers "docker")
from . import local as _local  # noqa: F401  (registers "local" and "bwrap")
from .base import CommandResult, SandboxBackend, available_backends, backends, register_backend

__all__ = [
    "CommandResult",
    "SandboxBackend",
    "available_backends",
    "backends",
    "register_backend",
]
