"""What the env under test tries to do to the machine, traced inside its container by an audit hook (PEP 578).

Runs in the contained worker process only (:mod:`hermes_envs.conformance._container`): every file it writes or
deletes, every process it starts or signals, ``os._exit``, and every read of an environment variable that holds a
secret is sent to the parent as one event with the phase (import, setup, reward, ...) and the site in the env's own
code (``env.py:12: open("cache.json", "w")``), on whichever thread it happened. The parent keeps them, so an env that
ends its own process still has its effects named.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from hermes_envs.conformance._sites import is_author_file

__all__ = ["Channel", "Tracer", "author_frame_site"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_WRITES = {
    "os.remove": "deleted",
    "os.rmdir": "deleted",
    "shutil.rmtree": "deleted",
    "os.mkdir": "created",
    "os.symlink": "created",
    "os.link": "created",
    "os.truncate": "wrote",
}
_SPAWNS = {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "os.fork", "os.forkpty"}
#: Names of environment variables whose value is a credential (the ones a trainer's machine holds).
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")


class Channel:
    """Newline-delimited JSON events on a pipe to the parent; one lock, so threads never interleave a line."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()
        self.pid = os.getpid()

    def send(self, event: dict[str, Any]) -> None:
        if os.getpid() != self.pid:
            return  # a child the env forked: its events are not the worker's to send
        data = (json.dumps(event, default=str) + "\n").encode()
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(self.fd, view) :]
                except InterruptedError:
                    continue
                except OSError:
                    return  # the parent is gone: nothing left to tell


def author_frame_site(depth: int = 1) -> str:
    """``file:line: code`` of the innermost frame of the env author's code on this thread's stack, or ``""`` when
    there is none or when the innermost frame outside the standard library is hermes-envs' own (a sandbox shell the
    kit starts for ``ctx.terminal``, a file its tools write, are the kit's doing, not the env's)."""
    import linecache

    frame: FrameType | None = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back  # the tracer's own frames
    first = True
    while frame is not None:
        name = frame.f_code.co_filename
        if first and not name.startswith(_STDLIB) and not name.startswith("<"):
            first = False
            if name.startswith(_OURS):
                return ""
        if is_author_file(name):
            line = linecache.getline(name, frame.f_lineno).strip()
            return f"{os.path.basename(name)}:{frame.f_lineno}: {line}"
        frame = frame.f_back
    return ""


_STDLIB = os.path.dirname(os.__file__)
_OURS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _is_secret_name(name: object) -> bool:
    """A word of the name (split at ``_`` and other separators) ends with a credential word: ``HF_TOKEN``,
    ``OPENAI_APIKEY``, ``DB_PASSWORDS``; not ``TOKENIZERS_PARALLELISM`` (a substring test took that for a token)."""
    return isinstance(name, str) and _secret_words_in(name)


@functools.lru_cache(maxsize=4096)
def _secret_words_in(name: str) -> bool:
    """(Cached: the framework and its libraries read the same few variables thousands of times per check run.)"""
    parts = [p for p in re.split(r"[^A-Z0-9]+", name.upper()) if p]
    return any(p.endswith(word) or p.endswith(word + "S") for p in parts for word in _SECRET_WORDS)


class Tracer:
    """The audit hook of the contained worker: sends each effect to the parent as it happens.

    ``phase`` answers the phase the worker is in; ``quiet`` names folders whose writes are the kit's own (its temp
    folder): writes there are not sent.
    """

    def __init__(self, channel: Channel, phase: Callable[[], str], quiet: tuple[str, ...]) -> None:
        self.channel = channel
        self.phase = phase
        self.quiet = tuple(q.rstrip("/") + "/" for q in quiet)
        self.label = ""
        self._tls = threading.local()
        self._real_exit = os._exit

    def install(self) -> None:
        """Hook audit events, ``os._exit`` and reads of ``os.environ`` (this process only; never undone)."""
        sys.addaudithook(self._hook)
        tracer = self

        def _exit(code: int) -> None:
            tracer._send("exit", detail=f"os._exit({code})", site=author_frame_site())
            tracer._real_exit(code)

        os._exit = _exit  # type: ignore[assignment]
        environ_cls = type(os.environ)

        class _TracedEnviron(environ_cls):  # type: ignore[misc,valid-type]
            def __getitem__(self, key: str) -> str:
                value: str = super().__getitem__(key)
                if _is_secret_name(key):
                    tracer._secret(key)
                return value

        os.environ.__class__ = _TracedEnviron

    def _send(self, kind: str, **fields: Any) -> None:
        self.channel.send({"ev": "effect", "kind": kind, "phase": self.phase(), "env": self.label, **fields})

    def _secret(self, key: str) -> None:
        if getattr(self._tls, "busy", False):
            return
        self._tls.busy = True
        try:
            site = author_frame_site()
            if site:
                self._send("secret", detail=key, site=site)
        finally:
            self._tls.busy = False

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if getattr(self._tls, "busy", False):
            return
        if event != "open" and event not in _WRITES and event not in _SPAWNS and event not in (
            "os.rename", "shutil.move", "shutil.copyfile", "os.kill", "os.killpg",
        ):  # fmt: skip
            return
        self._tls.busy = True
        try:
            self._handle(event, args)
        except Exception:  # a trace never breaks the env
            pass
        finally:
            self._tls.busy = False

    def _path(self, raw: object, dir_fd: object = None) -> str | None:
        if isinstance(raw, int):
            return None
        if isinstance(raw, (bytes, os.PathLike)):
            raw = os.fsdecode(raw)
        if not isinstance(raw, str) or not raw:
            return None
        path = os.path.abspath(raw)
        if path.startswith(self.quiet) or path.endswith((".pyc", ".pyc.tmp")) or path.startswith("/dev/"):
            return None
        return path

    def _handle(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
            )
            target = self._path(path) if writes else None
            if target:
                self._send("wrote", path=target, site=author_frame_site())
        elif event in _WRITES:
            target = self._path(args[0] if args else None)
            if target:
                self._send(_WRITES[event], path=target, site=author_frame_site())
        elif event in ("os.rename", "shutil.move", "shutil.copyfile"):
            source, dest = (tuple(args) + (None, None))[:2]
            if event != "shutil.copyfile" and (src := self._path(source)):
                self._send("deleted", path=src, site=author_frame_site())
            if target := self._path(dest):
                self._send("wrote", path=target, site=author_frame_site())
        elif event in _SPAWNS:
            site = author_frame_site()
            if (
                site
            ):  # the kit's own processes (sandbox shells, the slow check's `process` run) are not reported
                self._send("spawned", detail=_command(event, args), site=site)
        elif event in ("os.kill", "os.killpg"):
            target, signal = (tuple(args) + (None, None))[:2]
            own = {0, os.getpid(), os.getpgid(0)} if event == "os.killpg" else {0, os.getpid()}
            if isinstance(target, int) and (target in own or target < 0) and (site := author_frame_site()):
                self._send("signalled", detail=f"{event}({target}, {signal})", site=site)


def _command(event: str, args: tuple[Any, ...]) -> str:
    """The command line a spawn event starts, shortened for a finding."""
    if event == "subprocess.Popen":
        argv = args[1] if len(args) > 1 else args[0]
        text = argv if isinstance(argv, (str, bytes)) else " ".join(map(str, argv or []))
    elif event == "os.system":
        text = args[0]
    elif event in ("os.posix_spawn", "os.exec", "os.spawn"):
        argv = args[1] if event != "os.spawn" else args[2]
        text = " ".join(map(str, argv or []))
    else:
        text = event  # os.fork: the child runs this interpreter's code
    text = os.fsdecode(text) if isinstance(text, bytes) else str(text)
    return text if len(text) <= 120 else text[:117] + "..."
