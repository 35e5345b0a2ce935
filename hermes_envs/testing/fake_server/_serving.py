"""One run of the aiohttp server for a FakeModel on an event loop in the calling thread, stoppable from any thread.

The in-process host runs it on a daemon thread (``start()``) or on the caller's thread (``serve_forever()``, the
CLI); the child process of ``process=True`` runs it on a thread of its own. How a run starts, fails and stops is
therefore written once, whoever hosts it.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import threading
from collections.abc import Callable
from typing import Any

from ._app import make_server
from ._model import FakeModel

__all__ = ["LoopRun", "bind"]

_log = logging.getLogger("hermes_envs.fake_server")


class _OncePerCause:
    """The event loop's exception handler: one log line per cause (message, exception type, errno), then a count.

    asyncio logs every failed ``accept()`` with a traceback and retries each second; out of descriptors, with 1,100
    idle clients, that was 31,501 traceback lines for one cause."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, int | None], int] = {}

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        message = str(context.get("message") or "event loop error")
        key = (message, type(exc).__name__, getattr(exc, "errno", None))
        seen = self.counts.get(key, 0)
        self.counts[key] = seen + 1
        if seen:
            return
        detail = f": {type(exc).__name__}: {exc}" if exc is not None else ""
        _log.warning(
            "fake server: %s%s.%s (Later occurrences are counted, not logged.)", message, detail, _fix(exc)
        )

    def summary(self) -> list[str]:
        """One line per cause that happened more than once (for the log when the server stops)."""
        return [
            f"fake server: {message} ({name}) happened {n} times"
            for (message, name, _), n in self.counts.items()
            if n > 1
        ]


def _fix(exc: BaseException | None) -> str:
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return (
            f" The server holds as many connections as its descriptor limit allows ({soft}); it accepts again as "
            "clients close theirs. Fix: close idle client connections (or use fewer clients), or raise the limit "
            "(`ulimit -n 65536`) before starting the server."
        )
    return ""


def bind(host: str, port: int) -> socket.socket:
    """A listening, non-blocking socket on ``host:port`` (port 0: a free one); raises OSError as ``bind`` does."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(512)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class LoopRun:
    """Serving ``model`` on ``sock`` once: :meth:`run` blocks its thread until :meth:`stop` (from any thread) or one
    of ``stop_signals``. :attr:`settled` is set once it serves or has failed (:attr:`error`)."""

    def __init__(self, model: FakeModel, sock: socket.socket, stop_signals: tuple[int, ...] = ()) -> None:
        self.model = model
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        self.stop_signals = stop_signals
        self.error: BaseException | None = None
        self.settled = threading.Event()
        self.done = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._stop_asked = False

    def run(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until stopped; ``on_ready`` is called once requests are accepted (not when the start failed)."""
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        errors = _OncePerCause()
        loop.set_exception_handler(errors)
        runner = web.ServerRunner(make_server(self.model, loop), handle_signals=False, shutdown_timeout=0.2)
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, self.sock).start())
            stop_event = self._stop_event = asyncio.Event()
            if self._stop_asked:  # stop() came before the event existed
                stop_event.set()
            for sig in self.stop_signals:
                loop.add_signal_handler(sig, stop_event.set)
        except BaseException as e:  # reported by the host
            self.error = e
            self.sock.close()
            loop.close()
            asyncio.set_event_loop(None)
            self.done = True
            self.settled.set()
            return
        self.settled.set()
        try:
            if on_ready is not None:
                on_ready()
            loop.run_until_complete(stop_event.wait())
        finally:
            try:
                for sig in self.stop_signals:
                    loop.remove_signal_handler(sig)
                loop.run_until_complete(runner.cleanup())
                for line in errors.summary():
                    _log.warning("%s", line)
            finally:
                self.sock.close()
                loop.close()
                asyncio.set_event_loop(None)  # no closed loop left as the thread's current one
                self.done = True

    def stop(self) -> None:
        """Ask the run to end (thread-safe, idempotent); it ends once its loop sees the request."""
        self._stop_asked = True
        loop, stop_event = self._loop, self._stop_event
        if loop is not None and stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(stop_event.set)
            except RuntimeError:  # closed in between
                pass
