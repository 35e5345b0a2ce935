"""FakeOpenAIServer: a real HTTP server on 127.0.0.1, configured here, served by one host (``_hosts.py``: a daemon
thread or the caller's thread of this process, or a child process with ``process=True``) chosen at construction.

Its records and assertion helpers live in ``_recorded.py``, its clients and in-process transport in ``_clients.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_envs.errors import UsageError

from ._clients import IN_PROCESS_BASE_URL, ServerClients
from ._faults import Fault, fault_from_obj
from ._hosts import ChildProcessHost, Host, ThreadHost
from ._model import FakeModel
from ._policies import Policy, resolve_policy
from ._recorded import CHAT_ROUTES, RecordedCalls
from ._turns import Script

__all__ = ["CHAT_ROUTES", "IN_PROCESS_BASE_URL", "FakeOpenAIServer"]


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
        # Where the model is served from, chosen once: no method below asks which mode this is.
        self._hosting: Host = (
            ChildProcessHost(
                self._model,
                {  # a policy name stays a name: the child resolves it
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
                },
            )
            if process
            else ThreadHost(self._model)
        )

    # ------------------------------------------------------------------------------------------ configuration
    # Each setter changes the server's model, then tells the host, which makes the served model see it.
    @property
    def script(self) -> Script | None:
        return self._model.script

    @script.setter
    def script(self, value: Any) -> None:
        self._model.script = _to_script(value)
        self._hosting.setting("script", self._model.script)

    @property
    def policy(self) -> Policy | None:
        return self._model.policy

    @policy.setter
    def policy(self, value: Any) -> None:
        self._model.policy = resolve_policy(value)
        self._hosting.setting("policy", value)

    @property
    def strict(self) -> bool:
        return self._model.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._model.strict = value
        self._hosting.setting("strict", value)

    @property
    def model(self) -> str:
        return self._model.model

    @property
    def tokenizer(self) -> Any:
        return self._model.tokenizer

    @tokenizer.setter
    def tokenizer(self, value: Any) -> None:
        self._model.tokenizer = value
        self._hosting.setting("tokenizer", value)

    @property
    def process(self) -> bool:
        """True when the server runs in its own Python process (``process=True``)."""
        return self._hosting.in_child

    @property
    def pid(self) -> int | None:
        """The server process's id with ``process=True`` while it runs (for CPU accounting, signals), else None."""
        return self._hosting.pid

    def set_faults(self, faults: Iterable[Fault | str | dict[str, Any]], seed: int | None = None) -> None:
        """Replace the server-wide faults (and their counters)."""
        inj = self._model.injector
        inj.faults = [fault_from_obj(f) for f in faults]
        if seed is not None:
            inj._seed = seed
        inj.reset()
        self._hosting.faults(inj.faults, inj._seed)

    def reset(self) -> None:
        """Forget recorded calls, failures and fault counters (the script and policy stay)."""
        self._model.reset()
        self._hosting.reset()

    # -------------------------------------------------------------------------------------------- lifecycle
    @property
    def running(self) -> bool:
        return self._hosting.alive

    def start(self) -> FakeOpenAIServer:
        if not self.running:
            self.port = self._hosting.start(self.host, self.port)
        return self

    def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the calling thread (which must be the main thread) until SIGINT or SIGTERM, then stop.

        For a process that only serves (``hermes-envs fake-server``): no server thread, and no thread waiting for
        the signal beside it. ``on_ready`` is called once the port is bound and the server accepts requests.
        """
        if self.running:
            raise UsageError(
                "FakeOpenAIServer.serve_forever() should be called on a stopped server; got "
                f"{self!r}.\nFix: call it instead of start(), not after it."
            )

        def ready(port: int) -> None:
            self.port = port
            if on_ready is not None:
                on_ready()

        self._hosting.serve_forever(self.host, self.port, ready)

    def stop(self) -> None:
        self._hosting.stop()

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
        return self._hosting.url

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ``http://127.0.0.1:PORT/v1``."""
        return self.url + "/v1"
