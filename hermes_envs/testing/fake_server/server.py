"""FakeOpenAIServer: a real HTTP server on 127.0.0.1 in a daemon thread, plus an in-process transport."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .app import make_app
from .faults import Fault, fault_from_obj
from .model import FakeModel
from .policies import Policy, resolve_policy
from .process import ServerProcess, encode_setting
from .records import Call
from .transport import transport_class
from .turns import Script
from .view import tool_names

__all__ = ["FakeOpenAIServer"]

CHAT_ROUTES = ("/v1/chat/completions", "/chat/completions")
IN_PROCESS_BASE_URL = "http://fake-openai.invalid/v1"


def _to_script(script: Any) -> Script | None:
    if script is None or isinstance(script, Script):
        return script
    if isinstance(script, (str, Path)):
        return Script.from_obj(script)
    return Script.from_obj(script, source="<script>")


class FakeOpenAIServer:
    """A scripted, strict, OpenAI-compatible model server for tests.

    ``script``: a Script, a list of turns, a mapping in the file schema, or a YAML/JSON path.
    ``policy``: a callable ``(request_body) -> Turn | dict | str`` or a built-in name (``"echo"``,
    ``"answer:text=42"`` ...); answers every request when there is no script, and the script's misses otherwise.
    ``strict``: record misses in :attr:`failures` (they are always answered with HTTP 409, never a default reply).
    ``faults``: server-wide faults (Fault, spec strings like ``"500:rate=0.1"``); ``fault_seed`` seeds their rates.
    ``tokenizer``: any object with ``encode``/``decode`` — enables ``/generate``, ``/tokenize``, ``/detokenize``
    and exact token counts in ``usage``.
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
            faults = self._process_settings["faults"] = encode_setting("faults", inj.faults)
            self._process_settings["fault_seed"] = encode_setting("fault_seed", inj._seed)
            if self._child is not None:
                self._child.request("set_faults", faults, seed)

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
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> FakeOpenAIServer:
        if self.running:
            return self
        if self._process_settings is not None:
            return self._start_process()
        sock = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(512)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        ready = threading.Event()
        self._error = None
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready), name=f"fake-openai:{self.port}", daemon=True
        )
        self._thread.start()
        ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"fake server failed to start: {self._error!r}") from self._error
        return self

    def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(
            make_app(self._model), access_log=None, handle_signals=False, shutdown_timeout=0.2
        )
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
            self._stop_event = asyncio.Event()
        except BaseException as e:  # report to start()
            self._error = e
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_until_complete(self._stop_event.wait())
        finally:
            try:
                loop.run_until_complete(runner.cleanup())
            finally:
                sock.close()
                loop.close()
                self._loop = None

    def _start_process(self) -> FakeOpenAIServer:
        where = {"host": self.host, "port": self.port}
        encoded = {**{k: encode_setting(k, v) for k, v in where.items()}, **self._process_settings}
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
            self._model.calls[:] = calls  # keep the records readable after the server stopped
            self._model.misses[:] = misses
            return
        loop, thread = self._loop, self._thread
        if thread is None:
            return
        if loop is not None and self._stop_event is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._stop_event.set)
            except RuntimeError:
                pass
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

    # --------------------------------------------------------------------------------------------- records
    def _records(self) -> tuple[list[Call], list[str]]:
        """(calls, misses): from the child process while it serves, else from our model."""
        if self._child is not None:
            return self._child.request("records")
        return list(self._model.calls), list(self._model.misses)

    @property
    def calls(self) -> list[Call]:
        return self._records()[0]

    @property
    def call_count(self) -> int:
        return len(self._records()[0])

    def calls_to(self, route: str) -> list[Call]:
        """Calls to a route; ``"/v1/chat/completions"`` also matches the un-prefixed path."""
        route = route.rstrip("/")
        alt = route[3:] if route.startswith("/v1/") else "/v1" + route
        return [c for c in self.calls if c.route in (route, alt)]

    @property
    def chat_calls(self) -> list[Call]:
        return [c for c in self.calls if c.route in CHAT_ROUTES]

    @property
    def misses(self) -> list[str]:
        """Every unanswered request's message (strict or not)."""
        return self._records()[1]

    @property
    def failures(self) -> list[str]:
        """Misses that fail the test (empty when ``strict=False``)."""
        return self.misses if self._model.strict else []

    def assert_no_failures(self) -> None:
        failures = self.failures
        if failures:
            body = "\n\n".join(f"[{i + 1}] {f}" for i, f in enumerate(failures))
            raise AssertionError(f"the fake model server got {len(failures)} unmatched request(s):\n\n{body}")

    # ------------------------------------------------------------------------------------ assertion helpers
    def tools_offered(self) -> list[list[str]]:
        """Per chat call, the names of the tools offered."""
        return [tool_names((c.body or {}).get("tools")) for c in self.chat_calls if isinstance(c.body, dict)]

    def temperatures(self) -> list[float | None]:
        """Per chat call, the requested temperature (None when absent)."""
        return [(c.body or {}).get("temperature") for c in self.chat_calls if isinstance(c.body, dict)]

    def turns(self) -> list[int | None]:
        """Per chat call, the 1-based scripted turn that answered it (None for policy answers and misses)."""
        return [None if c.turn_index is None else c.turn_index + 1 for c in self.chat_calls]

    def conversations(self) -> int:
        """How many conversations started (chat calls answered as turn 1)."""
        return sum(1 for t in self.turns() if t == 1)

    # ------------------------------------------------------------------------------------- in-process use
    def transport(self, module: Any = None) -> Any:
        """An in-process transport (sync and async) for ``httpx2`` or ``httpx`` clients (default: the one the
        installed openai SDK takes): no socket, no
        thread; the same routes, records and faults as the HTTP server."""
        if self._process_settings is not None:
            raise ValueError(
                "FakeOpenAIServer(process=True) serves over HTTP from another process, so it has no in-process "
                "transport.\nFix: point the client at .base_url (async_client() without in_process=True), or use "
                "process=False for an in-process transport."
            )
        if module is None:
            from hermes_envs._http_client import sdk_http_module

            module = sdk_http_module()
        return transport_class(module)(self._model)

    def async_client(self, *, in_process: bool = False, max_retries: int = 0, **kwargs: Any) -> Any:
        """An ``openai.AsyncOpenAI`` pointed at this server (over HTTP, or in-process with ``in_process=True``)."""
        import openai

        return openai.AsyncOpenAI(**self._client_kwargs(in_process, max_retries, kwargs, sync=False))

    def client(self, *, in_process: bool = False, max_retries: int = 0, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` pointed at this server (over HTTP, or in-process with ``in_process=True``)."""
        import openai

        return openai.OpenAI(**self._client_kwargs(in_process, max_retries, kwargs, sync=True))

    def _client_kwargs(
        self, in_process: bool, max_retries: int, kw: dict[str, Any], sync: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"api_key": "fake-key", "max_retries": max_retries}
        if in_process:
            from hermes_envs._http_client import sdk_http_module

            http = sdk_http_module()  # the client library the installed openai SDK accepts
            cls = http.Client if sync else http.AsyncClient
            out["base_url"] = IN_PROCESS_BASE_URL
            out["http_client"] = cls(transport=self.transport(http), base_url=IN_PROCESS_BASE_URL)
        else:
            out["base_url"] = self.base_url
        out.update(kw)
        return out
