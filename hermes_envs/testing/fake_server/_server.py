"""FakeOpenAIServer: a real HTTP server on 127.0.0.1 in a daemon thread (or a child process), configured here.

Its records and assertion helpers live in ``recorded.py``, its clients and in-process transport in ``clients.py``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import signal
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_envs.errors import UsageError

from ._app import make_server
from ._clients import IN_PROCESS_BASE_URL, ServerClients
from ._faults import Fault, fault_from_obj
from ._model import FakeModel
from ._policies import Policy, resolve_policy
from ._process import ServerProcess, encode_setting
from ._recorded import CHAT_ROUTES, RecordedCalls
from ._turns import Script

__all__ = ["CHAT_ROUTES", "IN_PROCESS_BASE_URL", "FakeOpenAIServer"]

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


def _to_script(script: Any) -> Script | None:
    if script is None or isinstance(script, Script):
        return script
    if isinstance(script, (str, Path)):
        return Script.from_obj(script)
    return Script.from_obj(script, source="<script>")


class FakeOpenAIServer(RecordedCalls, ServerClients):
    """A scripted, strict, OpenAI-compatible model server for tests.

    ``script``: a Script, a list of turns, a mapping in the file schema, or a YAML/JSON path.
    ``policy``: a callable ``(request_body) -> Turn | dict | str`` or a built-in name (``"echo"``,
    ``"answer:text=42"`` ...); answers every request when there is no script, and the script's misses otherwise.
    ``strict``: record misses in :attr:`failures` (they are always answered with HTTP 409, never a default reply).
    ``faults``: server-wide faults (Fault, spec strings like ``"500:rate=0.1"``); ``fault_seed`` seeds their rates.
    ``tokenizer``: any object with ``encode``/``decode`` — enables ``/generate``, ``/tokenize``, ``/detokenize``
    and exact token counts in ``usage``.
    ``history``: keep only the last ``history`` calls in :attr:`calls` (0: none), for a long-running server whose
    memory should stay flat; :attr:`request_count` still counts them all. None (default): keep every call.
    ``process``: serve from a child Python process instead of a daemon thread, so the server does not share the
    GIL with the client under test (load tests, many concurrent rollouts). The script, policy, faults and
    tokenizer are pickled to the child; records (``.calls`` ...) are fetched from it. No in-process transport.
    """

    def __init__(
        self,
        script: Script | list[Any] | dict[str, Any] | str | Path | None = None,
        policy: Policy | str | None = None,
        *,
        strict: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "fake",
        faults: Iterable[Fault | str | dict[str, Any]] | None = None,
        fault_seed: int = 0,
        tokenizer: Any = None,
        assistant_marker: str = "<|im_start|>assistant",
        tool_parser: str = "hermes",
        stream_chunk_chars: int = 16,
        process: bool = False,
        history: int | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self._model = FakeModel(
            _to_script(script),
            resolve_policy(policy),
            strict=strict,
            model=model,
            tokenizer=tokenizer,
            faults=[fault_from_obj(f) for f in (faults or [])],
            fault_seed=fault_seed,
            assistant_marker=assistant_marker,
            tool_parser=tool_parser,
            stream_chunk_chars=stream_chunk_chars,
            history=history,
        )
        # process mode: the settings for the child, pickled once (a policy name stays a name: the child resolves
        # it). Encoding here fails at construction, not at start(), on what cannot reach the child.
        self._process_settings: dict[str, bytes] | None = (
            {
                name: encode_setting(name, value)
                for name, value in {
                    "script": self._model.script,
                    "policy": policy,
                    "strict": strict,
                    "model": model,
                    "tokenizer": tokenizer,
                    "faults": self._model.injector.faults,
                    "fault_seed": fault_seed,
                    "assistant_marker": assistant_marker,
                    "tool_parser": tool_parser,
                    "stream_chunk_chars": stream_chunk_chars,
                    "history": history,
                }.items()
            }
            if process
            else None
        )
        self._child: ServerProcess | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._here = False  # serving in the caller's thread (serve_forever)

    # ------------------------------------------------------------------------------------------ configuration
    @property
    def script(self) -> Script | None:
        return self._model.script

    @script.setter
    def script(self, value: Any) -> None:
        self._model.script = _to_script(value)
        self._push("script", self._model.script)

    @property
    def policy(self) -> Policy | None:
        return self._model.policy

    @policy.setter
    def policy(self, value: Any) -> None:
        self._model.policy = resolve_policy(value)
        self._push("policy", value)

    @property
    def strict(self) -> bool:
        return self._model.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._model.strict = value
        self._push("strict", value)

    @property
    def model(self) -> str:
        return self._model.model

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer

    @tokenizer.setter
    def tokenizer(self, value: Any) -> None:
        self._model.tokenizer = value
        self._push("tokenizer", value)

    @property
    def process(self) -> bool:
        """True when the server runs in its own Python process (``process=True``)."""
        return self._process_settings is not None

    @property
    def pid(self) -> int | None:
        """The server process's id with ``process=True`` while it runs (for CPU accounting, signals), else None."""
        return self._child.pid if self._child is not None else None

    def _push(self, name: str, value: Any) -> None:
        """Process mode: keep the child's setting in step with ours (started later, it gets them at start)."""
        if self._process_settings is not None:
            encoded = self._process_settings[name] = encode_setting(name, value)
            if self._child is not None:
                self._child.request("set", name, encoded)

    def set_faults(self, faults: Iterable[Fault | str | dict[str, Any]], seed: int | None = None) -> None:
        """Replace the server-wide faults (and their counters)."""
        inj = self._model.injector
        inj.faults = [fault_from_obj(f) for f in faults]
        if seed is not None:
            inj._seed = seed
        inj.reset()
        if self._process_settings is not None:
            encoded = self._process_settings["faults"] = encode_setting("faults", inj.faults)
            self._process_settings["fault_seed"] = encode_setting("fault_seed", inj._seed)
            if self._child is not None:
                self._child.request("set_faults", encoded, seed)

    def reset(self) -> None:
        """Forget recorded calls, failures and fault counters (the script and policy stay)."""
        self._model.reset()
        if self._child is not None:
            self._child.request("reset")

    # -------------------------------------------------------------------------------------------- lifecycle
    @property
    def running(self) -> bool:
        if self._child is not None:
            return self._child.alive
        if self._here:
            return self._loop is not None
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> FakeOpenAIServer:
        if self.running:
            return self
        if self._process_settings is not None:
            return self._start_process()
        sock = self._bind()
        ready = threading.Event()
        self._error = None
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready.set), name=f"fake-openai:{self.port}", daemon=True
        )
        self._thread.start()
        ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"fake server failed to start: {self._error!r}") from self._error
        return self

    def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the calling thread (which must be the main thread) until SIGINT or SIGTERM, then stop.

        For a process that only serves (``hermes-envs fake-server``): no server thread, and no thread waiting for
        the signal beside it. ``on_ready`` is called once the port is bound and the server accepts requests.
        """
        if self.running or self._process_settings is not None:
            raise UsageError(
                "FakeOpenAIServer.serve_forever() should be called on a stopped server without process=True; got "
                f"{self!r}.\nFix: call it instead of start(), not after it."
            )
        sock = self._bind()
        self._error = None
        self._here = True
        try:
            self._serve(sock, on_ready or (lambda: None), stop_signals=(signal.SIGINT, signal.SIGTERM))
        finally:
            self._here = False
        if self._error is not None:
            raise RuntimeError(f"fake server failed to start: {self._error!r}") from self._error

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(512)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        return sock

    def _serve(
        self, sock: socket.socket, ready: Callable[[], None], stop_signals: tuple[int, ...] = ()
    ) -> None:
        """Run the aiohttp server on a new event loop in this thread until ``stop()`` (or a ``stop_signals``)."""
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        errors = _OncePerCause()
        loop.set_exception_handler(errors)
        runner = web.ServerRunner(make_server(self._model, loop), handle_signals=False, shutdown_timeout=0.2)
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
            self._stop_event = asyncio.Event()
            for sig in stop_signals:
                loop.add_signal_handler(sig, self._stop_event.set)
        except BaseException as e:  # report to start()
            self._error = e
            ready()
            sock.close()
            loop.close()
            self._loop = None
            return
        ready()
        try:
            loop.run_until_complete(self._stop_event.wait())
        finally:
            try:
                for sig in stop_signals:
                    loop.remove_signal_handler(sig)
                loop.run_until_complete(runner.cleanup())
                for line in errors.summary():
                    _log.warning("%s", line)
            finally:
                sock.close()
                loop.close()
                self._loop = None

    def _start_process(self) -> FakeOpenAIServer:
        where = {"host": self.host, "port": self.port}
        # (called in process mode only, where the settings exist)
        encoded = {**{k: encode_setting(k, v) for k, v in where.items()}, **self._process_settings}  # type: ignore[dict-item]
        self._model.reset()
        child = ServerProcess(encoded)
        try:
            self.port = child.start()
        except BaseException as e:
            child.stop()
            raise RuntimeError(f"fake server failed to start: {e}") from e
        self._child = child
        return self

    def stop(self) -> None:
        if self._child is not None:
            child, self._child = self._child, None
            calls, misses = child.stop()
            for mine, theirs in ((self._model.calls, calls), (self._model.misses, misses)):
                mine.clear()  # keep the records readable after the server stopped
                mine.extend(theirs)
            return
        loop, thread = self._loop, self._thread
        if thread is None and not self._here:
            return
        if loop is not None and self._stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._stop_event.set)
            except RuntimeError:
                pass
        if thread is not None and thread is not threading.current_thread():
            thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> FakeOpenAIServer:
        return self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.stop)

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"<FakeOpenAIServer {where} calls={self.call_count} failures={len(self.failures)}>"

    # ------------------------------------------------------------------------------------------------ URLs
    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (vLLM/SGLang ``/generate`` and ``/health`` live here)."""
        if not self.running:
            raise RuntimeError("FakeOpenAIServer is not running; use `with server:` or server.start() first.")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return self.url + "/v1"
