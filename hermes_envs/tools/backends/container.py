"""The container-style sandbox (``container``) and the stand-ins for upstream's remote backends.

Upstream's sandboxes are containers, so env files written for them use absolute paths (``/workspace``, ``/tests``,
``/logs/verifier``). Here each task gets its own root folder; ``/workspace`` is the task's working directory and any
other absolute path resolves inside the task's root, never onto the host. With bubblewrap the task's root *is* the
shell's ``/`` (the host's system folders mounted read-only on top), so commands and the file tools see the same
tree. Without bubblewrap but as root, a private mount namespace binds the system folders into the task's root and
the shell ``chroot``s into it. Otherwise the file tools and ToolContext map absolute paths onto the task's folder and
commands run in the task's folder on the host (said once, with the fix).

``modal``, ``singularity``, ``daytona``, ``ssh`` and ``vercel_sandbox`` (upstream's names) run here: hermes-envs has
no client for those services, so an env configured for one is tested offline in this sandbox, and a log warning
says once which backend stands in for which.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import threading
from pathlib import Path

from ._isolation import bwrap_drop_admin, bwrap_usable, drop_admin, pid_namespace_wrapper, unshare_usable
from .base import SandboxBackend, register_backend
from .local import ShellBackend, python_dirs

log = logging.getLogger("hermes_envs.tools.sandbox")

__all__ = ["CONTAINER_WORKDIR", "ContainerBackend", "STAND_INS", "warn_stand_in"]

CONTAINER_WORKDIR = "/workspace"
# host folders mounted read-only into a task's root (bubblewrap): what programs need to run, nothing personal
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt")
STAND_INS = {
    "modal": "Modal",
    "singularity": "Singularity/Apptainer",
    "daytona": "Daytona",
    "ssh": "SSH",
    "vercel_sandbox": "Vercel Sandbox",
}

_warned: set[str] = set()
_warn_lock = threading.Lock()


def warn_stand_in(asked: str, why: str) -> None:
    """Log once per backend name that the container-style sandbox runs in place of ``asked`` and why."""
    with _warn_lock:
        if asked in _warned:
            return
        _warned.add(asked)
    if bwrap_usable():
        how = "bubblewrap gives each task its own root: /workspace, /tests, /logs are the task's own"
    elif unshare_usable():
        how = "as root, unshare + chroot give each task its own root: /workspace, /tests, /logs are the task's own"
    else:
        how = (
            "bubblewrap is missing, so only the file tools and ToolContext map /workspace, /tests, ... onto the "
            "task's folder; commands run in that folder on the host (Fix: apt-get install bubblewrap)"
        )
    log.warning(
        "terminal_backend %r: %s; the local container-style sandbox ('container') stands in for it (%s).",
        asked,
        why,
        how,
    )


@register_backend
class ContainerBackend(ShellBackend):
    """A persistent bash whose ``/`` is the task's own root folder (bubblewrap), working directory /workspace."""

    name = "container"
    container_paths = True

    def __init__(self, workdir, config, env):
        self.tree = workdir.parent
        self._kept_cache: tuple[list[tuple[str, str]], list[str]] | None = None
        self._links_lock = threading.Lock()
        # how the task's root becomes the shell's /: bubblewrap, else (root) unshare + chroot, else not at all
        self.mode = "bwrap" if bwrap_usable() else "chroot" if unshare_usable() else "mapped"
        if self.mode != "mapped":
            for folder in ("root", "tmp"):
                (self.tree / folder).mkdir(exist_ok=True)
            env = dict(env, HOME="/root", PWD=CONTAINER_WORKDIR, TMPDIR="/tmp")
        super().__init__(workdir, config, env)

    @property
    def links_confined(self) -> bool:  # type: ignore[override]
        return self.mode == "bwrap"  # (root in a chroot could still reach the host's files)

    def shell_path(self, host: Path) -> str:
        if self.mode == "mapped":
            return str(host)
        return "/" + host.relative_to(self.tree).as_posix()

    def _kept(self) -> tuple[list[tuple[str, str]], list[str]]:
        """(symlinks to recreate, folders to mount read-only) of the host in the task's root (looked up once: the
        reward's fresh shells ask again for each command)."""
        if self._kept_cache is None:
            self._kept_cache = self._look_up_kept()
        return self._kept_cache

    @staticmethod
    def _look_up_kept() -> tuple[list[tuple[str, str]], list[str]]:
        """What :meth:`_kept` says, looked up on the host now."""
        links, mounts = [], []
        for name in _SYSTEM_DIRS:
            host = "/" + name
            if os.path.islink(host):
                links.append((os.readlink(host), host))
            elif os.path.isdir(host):
                mounts.append(host)
        system = tuple("/" + n + "/" for n in _SYSTEM_DIRS)
        for keep in python_dirs():  # the trainer's own interpreter (a venv, a checkout) stays runnable
            if not (keep + "/").startswith(system):
                mounts.append(keep)
        return links, mounts

    def _argv(self) -> list[str]:
        if self.mode == "mapped":
            return pid_namespace_wrapper() if self.config.pid_namespace else []
        links, mounts = self._kept()
        if self.mode == "chroot":
            return self._chroot_argv(links, mounts)
        argv = [bwrap_usable() or "bwrap", "--bind", str(self.tree), "/"]
        self._place_links(links)
        for host in mounts:
            argv += ["--ro-bind", host, host]
        argv += ["--proc", "/proc", "--dev", "/dev", "--chdir", CONTAINER_WORKDIR]
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
        argv += bwrap_drop_admin()
        if not self.config.network:
            argv += ["--unshare-net"]
        return [*argv, "--"]

    def _before_fresh(self) -> None:
        # a spare started before the task replaced /bin (a folder of fake programs, say) must not run them
        if self.mode != "mapped":
            self._place_links(self._kept()[0])

    def _place_links(self, links: list[tuple[str, str]]) -> None:
        """Put the host's system symlinks (``/bin -> usr/bin``, ...) into the task's root itself, repairing any the
        task replaced. Not bubblewrap's ``--symlink``: that writes into the bound root too, so the second shell
        of a task (a restart, the reward's fresh shell) failed with "Can't make symlink at /bin: File exists"."""
        with self._links_lock:  # (a spare starting in the background repairs them too)
            self._place_links_now(links)

    def _place_links_now(self, links: list[tuple[str, str]]) -> None:
        for target, host in links:
            place = self.tree / host.lstrip("/")
            if place.is_symlink() and os.readlink(place) == target:
                continue
            if place.is_dir() and not place.is_symlink():
                shutil.rmtree(place, ignore_errors=True)
            elif place.exists() or place.is_symlink():
                place.unlink()
            os.symlink(target, place)

    def _chroot_argv(self, links: list[tuple[str, str]], mounts: list[str]) -> list[str]:
        """As root without bubblewrap: a private mount namespace in which the system folders are bound read-only
        into the task's root, then ``chroot`` into it (the shell ends up as the namespace's PID 1)."""
        t = shlex.quote(str(self.tree))
        steps = ["set -e", f"cd {t}"]  # (relative paths from here: a removed tree is never made again)
        for target, host in links:
            steps.append(f"[ -e .{host} ] || [ -L .{host} ] || ln -s {shlex.quote(target)} .{host}")
        for host in mounts:
            q = shlex.quote(host)
            steps.append(f"mkdir -p .{q} && mount --rbind {q} .{q} && mount -o remount,bind,ro .{q}")
        steps.append("mkdir -p proc dev && mount -t proc proc proc && mount --rbind /dev dev")
        drop = " ".join(shlex.quote(a) for a in drop_admin())  # no umount of its /proc, no new mounts
        steps.append(f'exec {drop} chroot . /bin/sh -c \'cd {CONTAINER_WORKDIR} && exec "$@"\' sh "$@"')
        wrapper = unshare_usable() or []
        extra = ["--net"] if not self.config.network else []
        return [*wrapper[:-1], "--ipc", "--uts", *extra, "--", "sh", "-c", "; ".join(steps), "sh"]


def _stand_in(name: str, service: str) -> type[SandboxBackend]:
    def check_available(cls) -> None:
        warn_stand_in(name, f"hermes-envs has no {service} client")

    cls = type(
        f"{name.title().replace('_', '')}StandIn",
        (ContainerBackend,),
        {
            "name": name,
            "check_available": classmethod(check_available),
            "__doc__": f"Upstream's {name!r} backend, run in the local container-style sandbox.",
            "__module__": __name__,
        },
    )
    return register_backend(cls)


for _name, _service in STAND_INS.items():
    _stand_in(_name, _service)
