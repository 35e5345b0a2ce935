"""Where a FakeOpenAIServer serves its model from: one :class:`Host` per mode, chosen once at construction.

- :class:`ThreadHost`: this process, serving the server's own FakeModel: on a daemon thread (``start()``) or on
  the calling thread (``serve_forever()``, what the CLI runs in the foreground). A changed setting, fault or reset
  is already in the served model: the host has nothing to forward.
- :class:`ChildProcessHost`: a child Python process (``process=True``) serving a copy built from pickled settings.
  A change is sent to it (``ServerProcess.request``), a change made while stopped is sent at the next start, and
  the records are fetched from it (and copied back into the server's model when it stops).

The server holds the settings (its FakeModel) and one host, and never asks which host it has: what differs between
the modes lives here, so a new behaviour cannot be wired into one mode and forgotten in the other.
"""

from __future__ import annotations

import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from hermes_envs.errors import UsageError

from ._faults import Fault
from ._model import FakeModel
from ._process import ServerProcess, encode_setting
from ._records import Call
from ._serving import LoopRun, bind
from ._transport import transport_class

__all__ = ["ChildProcessHost", "Host", "ThreadHost"]

_START_WAIT = 10.0


class Host(ABC):
    """How one FakeOpenAIServer's model is served: start/stop, liveness, pid and URL, and how changes and reads
    reach the model being served. ``model`` is the server's FakeModel (its settings, and its records after a stop).
    """

    in_child: bool = False
    """True when the model is served from another process (the server's ``process`` property)."""

    def __init__(self, model: FakeModel) -> None:
        self.model = model
        self._where: tuple[str, int] | None = None  # the address bound by the last start

    # ------------------------------------------------------------------------------------------ lifecycle
    @abstractmethod
    def start(self, host: str, port: int) -> int:
        """Start serving on ``host:port`` (0: a free port) and return the port bound; raises when it cannot."""

    @abstractmethod
    def serve_forever(self, host: str, port: int, on_ready: Callable[[int], None]) -> None:
        """Serve in the calling (main) thread until SIGINT/SIGTERM; ``on_ready(port)`` once requests are accepted."""

    @abstractmethod
    def stop(self) -> None:
        """Stop serving (a no-op when stopped); the records stay readable."""

    @property
    @abstractmethod
    def alive(self) -> bool:
        """True while the model is being served."""

    @property
    def pid(self) -> int | None:
        """The id of the serving process when it is not this one, else None."""
        return None

    @property
    def url(self) -> str:
        """The server root while it serves, e.g. ``http://127.0.0.1:PORT``."""
        if not self.alive or self._where is None:
            raise RuntimeError("FakeOpenAIServer is not running; use `with server:` or server.start() first.")
        host, port = self._where
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    # ------------------------------------------------------------------- changes reaching the served model
    @abstractmethod
    def setting(self, name: str, value: Any) -> None:
        """The server's model got a new ``name`` (``script``, ``policy`` as given, ``strict``, ``tokenizer``)."""

    @abstractmethod
    def faults(self, faults: list[Fault], seed: int) -> None:
        """The server's model got new faults (and fault seed), their counters reset."""

    @abstractmethod
    def reset(self) -> None:
        """The server's model forgot its records and fault counters."""

    # ---------------------------------------------------------------------------------------------- reads
    @abstractmethod
    def records(self) -> tuple[list[Call], list[str]]:
        """``(calls, misses)`` of the served model, copies."""

    @abstractmethod
    def request_count(self) -> int:
        """Requests received since the start or the last reset."""

    @abstractmethod
    def miss_count(self) -> int:
        """Misses since the start or the last reset."""

    @abstractmethod
    def transport(self, module: Any) -> Any:
        """An in-process transport for ``module`` (``httpx2`` / ``httpx``) answering with the served model."""


class ThreadHost(Host):
    """Serves the server's own model from this process, on a daemon thread or on the caller's thread."""

    def __init__(self, model: FakeModel) -> None:
        super().__init__(model)
        self._run: LoopRun | None = None
        self._thread: threading.Thread | None = None

    def start(self, host: str, port: int) -> int:
        run = LoopRun(self.model, bind(host, port))
        thread = threading.Thread(target=run.run, name=f"fake-openai:{run.port}", daemon=True)
        self._run, self._thread, self._where = run, thread, (host, run.port)
        thread.start()
        run.settled.wait(_START_WAIT)
        if run.error is not None:
            raise RuntimeError(f"fake server failed to start: {run.error!r}") from run.error
        return run.port

    def serve_forever(self, host: str, port: int, on_ready: Callable[[int], None]) -> None:
        run = LoopRun(self.model, bind(host, port), stop_signals=(signal.SIGINT, signal.SIGTERM))
        self._run, self._where = run, (host, run.port)
        run.run(lambda: on_ready(run.port))
        if run.error is not None:
            raise RuntimeError(f"fake server failed to start: {run.error!r}") from run.error

    def stop(self) -> None:
        run, thread = self._run, self._thread
        if run is not None:
            run.stop()
        if thread is not None and thread is not threading.current_thread():
            thread.join(_START_WAIT)
            self._thread = None

    @property
    def alive(self) -> bool:
        return self._run is not None and not self._run.done

    # The served model is the server's own: a change made to it is already served.
    def setting(self, name: str, value: Any) -> None:
        pass

    def faults(self, faults: list[Fault], seed: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def records(self) -> tuple[list[Call], list[str]]:
        return list(self.model.calls), list(self.model.misses)

    def request_count(self) -> int:
        return int(self.model.received)

    def miss_count(self) -> int:
        return int(self.model.missed)

    def transport(self, module: Any) -> Any:
        return transport_class(module)(self.model)


class ChildProcessHost(Host):
    """Serves a copy of the model from a child Python process; ``settings`` are the constructor's, pickled here so
    that what cannot reach the child fails at construction, not at ``start()``."""

    in_child = True

    def __init__(self, model: FakeModel, settings: dict[str, Any]) -> None:
        super().__init__(model)
        self._settings = {name: encode_setting(name, value) for name, value in settings.items()}
        self._child: ServerProcess | None = None
        self._counts = (0, 0)  # (requests, misses) the child had counted when it stopped

    def start(self, host: str, port: int) -> int:
        where = {"host": encode_setting("host", host), "port": encode_setting("port", port)}
        self.model.reset()  # the records of this run are the child's; the ones kept from the last run go
        self._counts = (0, 0)
        child = ServerProcess({**where, **self._settings})
        try:
            port = child.start()
        except BaseException as e:
            child.stop()
            raise RuntimeError(f"fake server failed to start: {e}") from e
        self._child, self._where = child, (host, port)
        return port

    def serve_forever(self, host: str, port: int, on_ready: Callable[[int], None]) -> None:
        raise UsageError(
            "FakeOpenAIServer.serve_forever() should be called on a stopped server without process=True; got "
            "process=True, which serves from a child process.\nFix: call start() (or `with server:`) to serve "
            "from the child process, or construct the server without process=True to serve in this thread."
        )

    def stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        calls, misses, self._counts = child.stop()  # raises when the child died: its records are lost
        self.model.calls.clear()  # keep the records readable after the server stopped
        self.model.calls.extend(calls)
        self.model.misses.clear()
        self.model.misses.extend(misses)

    @property
    def alive(self) -> bool:
        return self._child is not None and self._child.alive

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    # A change is kept for the next start and, while the child runs, sent to it.
    def setting(self, name: str, value: Any) -> None:
        encoded = self._settings[name] = encode_setting(name, value)
        if self._child is not None:
            self._child.request("set", name, encoded)

    def faults(self, faults: list[Fault], seed: int) -> None:
        encoded = self._settings["faults"] = encode_setting("faults", faults)
        self._settings["fault_seed"] = encode_setting("fault_seed", seed)
        if self._child is not None:
            self._child.request("set_faults", encoded, seed)

    def reset(self) -> None:
        self._counts = (0, 0)
        if self._child is not None:
            self._child.request("reset")

    def records(self) -> tuple[list[Call], list[str]]:
        if self._child is not None:
            calls, misses = self._child.request("records")
            return calls, misses
        return list(self.model.calls), list(self.model.misses)

    def _counted(self) -> tuple[int, int]:
        if self._child is not None:
            requests, misses = self._child.request("counts")
            return int(requests), int(misses)
        return self._counts

    def request_count(self) -> int:
        return self._counted()[0]

    def miss_count(self) -> int:
        return self._counted()[1]

    def transport(self, module: Any) -> Any:
        raise ValueError(
            "FakeOpenAIServer(process=True) serves over HTTP from another process, so it has no in-process "
            "transport.\nFix: point the client at .base_url (async_client() without in_process=True), or use "
            "process=False for an in-process transport."
        )
