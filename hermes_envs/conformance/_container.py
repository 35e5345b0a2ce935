"""The container the env under test runs in: a child process with its own mount, PID and network namespaces.

The parent forks a *keeper* that unshares those namespaces, mounts a private tmpfs and over the host's root (and
each other filesystem mounted under it) an overlay whose writable layer lives in that tmpfs, then forks the
namespace's init, which forks the *worker*: chrooted into the overlay, with its own /proc, a loopback-only network
and its own session. The worker runs the env; every write succeeds there and lands in the tmpfs, so the host's
files (the checkout, $HOME, /tmp, /workspace) are never touched. When the worker ends, init ends, and the kernel
kills every process left in the namespace: nothing the env started outlives the run. The keeper then lists what
the overlay holds (every file written or deleted, by any process, thread or native code) and sends it, with how
the worker ended, to the parent on the same pipe the worker streams its events on; the parent keeps the report.

Without root the keeper first enters a user namespace of its own (where the kernel allows unprivileged ones). Where
namespaces or overlays cannot be made (not Linux, no root and no user namespaces), the worker runs as a plain child
process instead (traced, not contained) and ``unavailable`` says why.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_envs.errors import ConfigError, EnvLoadError

__all__ = ["Changed", "ContainerResult", "run_contained"]

_CLONE_NEWNS, _CLONE_NEWPID, _CLONE_NEWNET = 0x00020000, 0x20000000, 0x40000000
_CLONE_NEWUSER, _CLONE_NEWIPC, _CLONE_NEWUTS = 0x10000000, 0x08000000, 0x04000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 0x4000, 1 << 18
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_VIRTUAL = ("/proc", "/dev", "/sys")


@dataclass(frozen=True)
class Changed:
    """One path the contained run wrote (``created`` / ``modified``) or ``deleted`` on its copy of the host."""

    path: str
    how: str


@dataclass
class ContainerResult:
    """What the parent learned: the worker's events, the paths it changed, how it ended, and the isolation."""

    events: list[dict[str, Any]] = field(default_factory=list)
    changed: list[Changed] = field(default_factory=list)
    #: ``exited 0`` / ``killed by SIGSEGV``; empty when the worker's end is unknown.
    ended: str = ""
    exit_code: int | None = None
    #: Python's fault handler output when the worker crashed in native code.
    fault: str = ""
    #: Why the run was traced only (no namespaces, no overlay), empty when it was contained.
    unavailable: str = ""
    #: The container's folder on the host (the kit's own: nothing under it is the env's effect).
    base: str = ""
    #: (pid, command line) of the processes still running in the container after the env was closed.
    leftover: list[tuple[int, str]] = field(default_factory=list)
    #: Seconds of silence after which the kit stopped the run as hung (0: it was not stopped).
    hung: float = 0.0
    #: How the container's first process started: ``fork`` (of this process) or ``fresh`` (a new interpreter).
    started: str = ""


_LIBC: list[Any] = []


def _libc() -> Any:
    if not _LIBC:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        _LIBC.append(lib)
    return _LIBC[0]


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None
) -> None:
    def enc(v: str | None) -> bytes | None:
        return v.encode() if v is not None else None

    if _libc().mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype or 'bind'} on {target}: {os.strerror(err)}")


def _unshare(flags: int) -> None:
    if _libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


def _mount_points() -> list[str]:
    """Mount points of this mount namespace, parents before children (``/proc/self/mountinfo`` order)."""
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for row in fh:
            raw = row.split()[4]
            points.append(raw.encode().decode("unicode_escape"))
    return points


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _build_root(base: str, user_ns: bool = False) -> list[tuple[str, str]]:
    """In a new mount namespace: a tmpfs at ``base``, and at ``base/root`` an overlay of every host filesystem with
    its writable layer in the tmpfs. Returns (host path, its upper folder) per overlay."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount("tmpfs", base, "tmpfs", 0, "mode=0700")
    root = os.path.join(base, "root")
    os.mkdir(root)
    if user_ns:
        return _build_user_root(base, root)
    layers: list[tuple[str, str]] = []
    for n, point in enumerate(_mount_points()):
        if _under(point, base) or any(_under(point, v) and point != v for v in _VIRTUAL):
            continue
        target = root + point if point != "/" else root
        if point in ("/dev", "/sys", "/proc"):
            _virtual(point, target)
            continue
        try:
            layers.append(_overlay(base, f"{n}", point, target, user_ns=False))
        except OSError:
            if point == "/":
                raise
            with contextlib.suppress(OSError):  # a filesystem overlayfs refuses: seen read-only
                _mount(point, target, None, _MS_BIND | _MS_REC)
                _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)
    return layers


def _virtual(point: str, target: str) -> None:
    """/dev (with a /dev/shm of its own) and a read-only /sys bound in; /proc is mounted by the namespace's init."""
    if point == "/proc":
        return
    with contextlib.suppress(OSError):
        _mount(point, target, None, _MS_BIND | _MS_REC)
        if point == "/sys":  # the kernel's knobs are the host's: read-only
            _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)
        else:  # shared memory of its own (POSIX semaphores and shm segments are files there)
            _mount("tmpfs", os.path.join(target, "shm"), "tmpfs", 0, "mode=1777")


def _overlay(base: str, key: str, lower: str, target: str, *, user_ns: bool) -> tuple[str, str]:
    if any(c in lower for c in ",:"):
        raise OSError(f"overlayfs options cannot name {lower!r}")
    upper, work = os.path.join(base, f"u{key}"), os.path.join(base, f"w{key}")
    os.mkdir(upper)
    os.mkdir(work)
    options = f"lowerdir={lower},upperdir={upper},workdir={work}" + (",userxattr" if user_ns else "")
    _mount("overlay", target, "overlay", 0, options)
    return lower, upper


def _build_user_root(base: str, root: str) -> list[tuple[str, str]]:
    """The root in a user namespace, where the host's / cannot be an overlay's lower layer (its mounts are locked):
    a tmpfs root holding the host's top-level links, and an overlay per top-level folder. A top-level folder that
    cannot be overlaid (it holds locked mounts) stays empty: never the host's own, writable."""
    layers = [("/", root)]
    for n, entry in enumerate(sorted(os.scandir("/"), key=lambda e: e.name)):
        path, target = entry.path, os.path.join(root, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(path), target)
        elif entry.is_dir():
            os.mkdir(target)
            if path in _VIRTUAL:
                _virtual(path, target)
            else:
                with contextlib.suppress(OSError):
                    layers.append(_overlay(base, f"t{n}", path, target, user_ns=True))
        else:
            open(target, "w").close()  # a top-level file (/.dockerenv): present, empty
    with open(os.path.join(base, "initial"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(os.listdir(root)))
    return layers


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        import fcntl

        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _changes(layers: list[tuple[str, str]]) -> list[Changed]:
    """Every path an overlay's upper layer holds: written or created files, and deletions (whiteouts)."""
    out: list[Changed] = []
    for point, upper in layers:
        initial: set[str] = set()
        if point == "/" and os.path.exists(os.path.join(os.path.dirname(upper), "initial")):
            with open(os.path.join(os.path.dirname(upper), "initial"), encoding="utf-8") as fh:
                initial = set(fh.read().split("\n"))  # the user-namespace root: what it started with
        for folder, dirs, files in os.walk(upper):
            if folder == upper and initial:
                dirs[:] = [d for d in dirs if d not in initial]
                files = [f for f in files if f not in initial]
            rel = os.path.relpath(folder, upper)
            host_dir = os.path.normpath(os.path.join(point, rel))
            for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                host = os.path.join(host_dir, name)
                try:
                    st = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                    out.append(Changed(host, "deleted"))
                else:
                    out.append(Changed(host, "modified" if os.path.lexists(host) else "created"))
            for name in dirs:
                host = os.path.join(host_dir, name)
                if not os.path.lexists(host):
                    out.append(Changed(host, "created"))
    return out


def _send(fd: int, event: dict[str, Any]) -> None:
    data = (json.dumps(event) + "\n").encode()
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]


def _describe_status(status: int) -> tuple[str, int | None]:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return f"killed by {signal.Signals(sig).name}", None
    code = os.WEXITSTATUS(status)
    return f"exited {code}", code


def _die_with_parent() -> None:
    """SIGKILL this process when its parent ends (an interrupted kit takes the container down with it)."""
    with contextlib.suppress(Exception):
        _libc().prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _init(worker: Callable[[], None], write_fd: int, root: str, cwd: str) -> None:
    """PID 1 of the namespace: mount /proc, start the worker in the chroot, reap orphans until the worker ends."""
    try:
        _mount("proc", os.path.join(root, "proc"), "proc")
    except OSError:  # a user namespace under a masked /proc may not mount one: the host's, for what it shows
        _mount("/proc", os.path.join(root, "proc"), None, _MS_BIND | _MS_REC)
    with contextlib.suppress(OSError):  # /proc/sys holds machine-wide settings: read-only
        sys_knobs = os.path.join(root, "proc", "sys")
        _mount(sys_knobs, sys_knobs, None, _MS_BIND)
        _mount(None, sys_knobs, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)
    pid = os.fork()
    if pid == 0:
        os.setsid()  # a killpg of its own group ends the worker, never the kit's parent
        os.chroot(root)
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir("/")
        _run_worker(worker)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if done == pid:
            ended, code = _describe_status(status)
            _send(write_fd, {"ev": "ended", "how": ended, "code": code})
            os._exit(0)  # the kernel now kills whatever is left in the namespace


def _run_worker(worker: Callable[[], None]) -> None:
    code = 0
    try:
        worker()
    except BaseException:  # the worker reports the env's own crashes itself: this is the kit's, so say where
        import traceback

        with contextlib.suppress(Exception):
            traceback.print_exc()
        code = 70
    finally:
        os._exit(code)


def _keeper(worker: Callable[[], None], write_fd: int, base: str, cwd: str, fault_path: str) -> None:
    """The child that makes the namespaces and overlay, then reports what the overlay holds when the run ended."""
    try:
        os.setsid()
        _die_with_parent()
        user_ns = os.geteuid() != 0
        if user_ns:
            _enter_user_namespace()
        _unshare(_CLONE_NEWNS | _CLONE_NEWPID | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS)
        layers = _build_root(base, user_ns)
        _loopback_up()
    except OSError as exc:  # traced only: the worker runs in this process, as a plain child of the kit
        _send(write_fd, {"ev": "uncontained", "why": f"making the container failed: {exc}"})
        os.makedirs(os.path.join(base, "tmp"), exist_ok=True)
        with contextlib.suppress(OSError):
            _loopback_up()
        _run_worker(worker)
    root = os.path.join(base, "root")
    init = os.fork()
    if init == 0:
        try:
            _die_with_parent()
            _init(worker, write_fd, root, cwd)
        finally:
            os._exit(72)
    # the parent's word that the run hung: end the namespace (its init), then report the overlay as usual
    signal.signal(signal.SIGUSR1, lambda *_: os.kill(init, signal.SIGKILL))
    os.waitpid(init, 0)
    changed = _changes(layers)
    fault = ""
    for point, upper in layers:
        if _under(fault_path, point):
            with contextlib.suppress(OSError):
                with open(
                    upper + fault_path[len(point.rstrip("/")) :], encoding="utf-8", errors="replace"
                ) as fh:
                    fault = fh.read()[-4000:]
    _send(write_fd, {"ev": "changed", "paths": [[c.path, c.how] for c in changed], "fault": fault})
    os._exit(0)


class _Silent(Exception):
    """No byte from the container for the allowed time."""


def _read_events(fd: int, idle: float | None = None) -> Iterator[dict[str, Any]]:
    """The JSON events on ``fd`` until it closes; raises _Silent after ``idle`` seconds without a byte."""
    buffer = b""
    with os.fdopen(fd, "rb", buffering=0) as stream:
        while True:
            if idle is not None and not select.select([stream], [], [], idle)[0]:
                raise _Silent
            chunk = stream.read(65536)
            if not chunk:
                return
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                with contextlib.suppress(ValueError):
                    yield json.loads(line)


def _events_until_hung(
    fd: int, pid: int, hang_seconds: float | None, result: ContainerResult
) -> Iterator[dict[str, Any]]:
    """The container's events; after ``hang_seconds`` of silence, stop the run (the keeper ends the namespace and
    still reports the overlay; an uncontained worker is killed with its process group) and read what is left."""
    read = _read_events(fd, hang_seconds)
    try:
        yield from read
        return
    except _Silent:
        result.hung = hang_seconds or 0.0
    if result.unavailable:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
    else:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGUSR1)
    with contextlib.suppress(
        _Silent, OSError
    ):  # the keeper's last words; a stuck keeper is killed in the end
        yield from _read_events(fd, 60.0)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def containable() -> str:
    """Why the env cannot run contained here (empty when it can)."""
    if not sys.platform.startswith("linux"):
        return f"namespaces need Linux; this is {sys.platform}"
    return ""


def _enter_user_namespace() -> None:
    """Without root: become root of a user namespace of our own (mapped to this user), whose mount, PID and
    network namespaces we may then make; raises OSError where the kernel refuses unprivileged user namespaces."""
    uid, gid = os.geteuid(), os.getegid()
    _unshare(_CLONE_NEWUSER)
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as fh:
            fh.write(text)


#: Threads whose state a forked child would inherit half-made (a held lock, an executor whose workers did not come
#: along): while one runs, the container starts from a fresh interpreter instead of a fork of this one.
def _fork_safe() -> bool:
    """A fork copies only the calling thread: any other live thread (pytest-xdist's execnet I/O, a fake server, a
    tool pool, a library's own) may hold a lock (logging, imports, the allocator) at that instant, and the child
    then deadlocks or fails at random, more often under load. So fork only a single-threaded process (the CLI);
    anywhere else the container starts from a fresh interpreter."""
    return threading.current_thread() is threading.main_thread() and threading.active_count() == 1


def _child(spec: dict[str, Any], write_fd: int) -> None:
    """The container's first process (a fork of the kit, or a fresh interpreter): never returns."""
    try:
        # The kit's temp folder before anything is imported: a library that makes temp folders at import (wandb)
        # makes them there, not in the host's /tmp.
        os.makedirs(spec["kit_tmp"], exist_ok=True)
        os.environ["TMPDIR"] = tempfile.tempdir = spec["kit_tmp"]
        module, _, name = spec["target"].partition(":")
        worker = getattr(_import(module, spec.get("target_file")), name)(*spec["args"])
        run = lambda: worker(write_fd, spec["kit_tmp"])  # noqa: E731
        if spec["unavailable"]:
            os.setsid()
            os.makedirs(spec["kit_tmp"], exist_ok=True)
            _run_worker(run)
        _keeper(run, write_fd, spec["base"], spec["cwd"], spec["fault_path"])
    except BaseException as exc:  # the container could not start: the parent names why
        _send(write_fd, {"ev": "ended", "how": f"could not start: {type(exc).__name__}: {exc}", "code": None})
    finally:
        os._exit(73)


def _import(module: str, file: str | None) -> Any:
    """``module``, or (a fresh interpreter whose path finds another module of that name) the parent's file of it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if not file:
            raise
    from importlib import util as import_util

    found = import_util.spec_from_file_location(module, file)
    if found is None or found.loader is None:
        raise EnvLoadError(
            f"the env's module {module!r} should load from {file}; Python found no loader for it. "
            "Fix: check that the file is a .py file that Python can import."
        )
    loaded = import_util.module_from_spec(found)
    sys.modules[module] = loaded
    found.loader.exec_module(loaded)
    return loaded


def _main() -> None:
    """Entry of a fresh interpreter started as the container's first process (``python -c``, spec on argv)."""
    spec = json.loads(sys.argv[1])
    sys.path[:] = spec["sys_path"]  # the modules the parent could import (pytest's rootdir, a test's folder)
    _child(spec, int(spec["write_fd"]))


def run_contained(
    target: str,
    args: list[Any],
    on_event: Callable[[dict[str, Any]], None] | None = None,
    hang_seconds: float | None = None,
    *,
    start: str = "auto",
    namespaces: bool = True,
) -> ContainerResult:
    """Run ``module:factory`` ``target``'s ``factory(*args)(write_fd, kit_tmp)`` contained and collect what it sends
    on ``write_fd`` (JSON lines); ``args`` are JSON values (a fresh interpreter may have to rebuild the worker).

    ``kit_tmp`` is the worker's temp folder (``TMPDIR``): the kit's own files and the env's ``tempfile`` use go there.
    ``on_event`` sees each event as it arrives. The container is a fork of this process, which has already imported
    the heavy libraries, unless a thread of the kit runs here (a fork would inherit its locks mid-use): then it
    starts from a fresh interpreter. ``start`` = ``"fork"`` or ``"fresh"`` picks one (tests of each way).
    A run that sends nothing for ``hang_seconds`` is stopped (``result.hung``). ``namespaces=False`` runs the
    worker traced only, as on a host without namespaces (``result.unavailable`` says so).
    """
    if start not in ("auto", "fork", "fresh"):
        raise ConfigError(f"start should be 'auto', 'fork' or 'fresh'; got {start!r}")
    base = tempfile.mkdtemp(prefix="hermes-contain-")
    off = "" if namespaces else "namespaces are switched off (the namespaces setting is false)"
    result = ContainerResult(unavailable=containable() or off, base=base)
    kit_tmp = os.path.join(base, "tmp")
    spec: dict[str, Any] = {
        "target": target, "args": args, "base": base, "kit_tmp": kit_tmp, "cwd": os.getcwd(),
        "fault_path": os.path.join(kit_tmp, "fault.txt"), "unavailable": result.unavailable,
    }  # fmt: skip
    fault_path = spec["fault_path"]
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    fresh: subprocess.Popen[bytes] | None = None
    result.started = "fork" if start == "fork" or (start == "auto" and _fork_safe()) else "fresh"
    if result.started == "fork":
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child(spec, write_fd)
    else:
        spec["write_fd"], spec["sys_path"] = write_fd, list(sys.path)
        spec["target_file"] = getattr(sys.modules.get(target.partition(":")[0]), "__file__", None)
        code = "from hermes_envs.conformance._container import _main; _main()"
        fresh = subprocess.Popen([sys.executable, "-c", code, json.dumps(spec)], pass_fds=(write_fd,))
        pid = fresh.pid
    os.close(write_fd)
    try:
        for event in _events_until_hung(read_fd, pid, hang_seconds, result):
            kind = event.get("ev")
            if kind == "changed":
                result.changed = [Changed(p, how) for p, how in event["paths"]]
                result.fault = event.get("fault", "")
            elif kind == "ended":
                result.ended, result.exit_code = event["how"], event.get("code")
            elif kind == "uncontained":
                result.unavailable = event["why"]
            else:
                result.events.append(event)
                if on_event is not None:
                    on_event(event)
    except BaseException:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        if fresh is not None:
            fresh.wait()
            status = fresh.returncode if fresh.returncode >= 0 else -fresh.returncode
            status = (status << 8) if fresh.returncode >= 0 else status
        else:
            _, status = os.waitpid(pid, 0)
        if result.unavailable and not result.ended:  # the plain child is the worker itself
            result.ended, result.exit_code = _describe_status(status)
            if os.path.exists(fault_path):
                with open(fault_path, encoding="utf-8", errors="replace") as fh:
                    result.fault = fh.read()[-4000:]
        shutil.rmtree(base, ignore_errors=True)
    return result
