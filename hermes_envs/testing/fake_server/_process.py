"""Run a FakeOpenAIServer in its own Python process (``FakeOpenAIServer(..., process=True)``).

Why: a server in a daemon thread shares the GIL with the client under test. At 64 concurrent rollouts the client
(the openai SDK) and the server then take turns on one core, and each turn costs more than with one rollout. In
its own process the server runs on another core, as a real vLLM would.

The parent talks to the child over the child's stdin/stdout: length-prefixed pickles, one request and one reply
at a time. We use a plain subprocess rather than ``multiprocessing``: its ``spawn`` start method re-imports the
parent's ``__main__`` (a user's env file, or pytest's), and ``fork`` is unsafe in a process that runs threads.
"""

from __future__ import annotations

import pickle
import struct
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any

from ._policies import POLICIES

__all__ = ["ServerProcess", "encode_setting", "read_message", "write_message"]

_HEADER = struct.Struct("!Q")
_BUILTIN_POLICY_MODULE = "hermes_envs.testing.fake_server._policies"
_START_TIMEOUT = 60.0
_CHILD_MODULE = "hermes_envs.testing.fake_server._process_child"


def write_message(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(stream: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(stream: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(_read_exact(stream, _HEADER.size))
    return pickle.loads(_read_exact(stream, size))


def _pickled(name: str, value: Any) -> bytes:
    """``value`` pickled, or a ValueError naming the setting that cannot go to the server process."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # PicklingError, AttributeError (local objects), TypeError (locks, sockets)
        raise ValueError(
            f"FakeOpenAIServer(process=True) should get a {name} that can be sent to the server process "
            f"(pickled); got {value!r}, which cannot: {e}.\nFix: use a function defined at the top level of an "
            "importable module (not a lambda, a closure or a test file's function), a built-in policy name, or "
            "process=False to serve from a thread in this process."
        ) from e


def _registered_policies(spec: Any) -> dict[str, Any]:
    """Factories registered with ``register_policy`` in this process that ``spec`` names (the child lacks them)."""
    if not isinstance(spec, str):
        return {}
    name = spec.split(":", 1)[0].strip()
    factory = POLICIES.find(name)
    if factory is None or getattr(factory, "__module__", "") == _BUILTIN_POLICY_MODULE:
        return {}
    return {name: factory}


def encode_setting(name: str, value: Any) -> bytes:
    """A setting (``script``, ``policy`` ...) ready for the child; policies carry their registered factories."""
    data = _pickled(name, value)
    if name == "policy":
        return _pickled("policy", (value, _registered_policies(value)))
    return data


class ServerProcess:
    """The parent's handle on a child process serving a FakeOpenAIServer; every method is thread-safe."""

    def __init__(self, settings: dict[str, bytes]) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> int:
        """Start the child and return the port it listens on."""
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", _CHILD_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        # The child unpickles scripts, policies and tokenizers: it must import what this process can import.
        port = self.request("start", list(sys.path), self._settings)
        return int(port)

    def request(self, op: str, *args: Any) -> Any:
        """Send one command to the child and return its answer (raises what the child reported)."""
        with self._lock:
            proc = self._proc
            if proc is None or proc.stdin is None or proc.stdout is None:
                raise RuntimeError(
                    "the fake server process is not running; start it with `with server:` first."
                )
            try:
                write_message(proc.stdin, (op, args))
                status, value = read_message(proc.stdout)
            except (EOFError, BrokenPipeError, OSError) as e:
                raise RuntimeError(self._died_message()) from e
        if status == "error":
            raise RuntimeError(value)
        return value

    def _died_message(self) -> str:
        code = self._proc.wait(5) if self._proc is not None else None
        err = ""
        if self._stderr is not None:
            self._stderr.seek(0)
            err = self._stderr.read().decode(errors="replace")[-3000:]
        return (
            f"the fake server process exited unexpectedly (exit code {code}).\n"
            f"Its stderr ended with:\n{err or '(nothing)'}"
        )

    def stop(self) -> tuple[list[Any], list[str], tuple[int, int]]:
        """Stop the child and return its final ``(calls, misses, (request_count, miss_count))``.

        Raises RuntimeError when the child had died: its records are lost, and a test must not pass on them.
        """
        records: tuple[list[Any], list[str], tuple[int, int]] = ([], [], (0, 0))
        proc = self._proc
        if proc is None:
            return records
        try:
            if proc.poll() is None:
                records = self.request("stop")
            else:
                raise RuntimeError(self._died_message() + "\nIts recorded calls are lost.")
        finally:
            with self._lock:
                for stream in (proc.stdin, proc.stdout):
                    if stream is not None:
                        try:
                            stream.close()
                        except OSError:  # a dead child: the pipe is broken, there is nothing left to flush
                            pass
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                self._proc = None
                if self._stderr is not None:
                    self._stderr.close()
                    self._stderr = None
        return records
