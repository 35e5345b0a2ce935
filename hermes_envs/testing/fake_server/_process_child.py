"""The child side of ``FakeOpenAIServer(process=True)``: run as ``python -m`` by :class:`~.process.ServerProcess`, it
serves a FakeOpenAIServer and answers the parent's commands (start, records, counts, set, reset, stop) over stdin/stdout."""

from __future__ import annotations

import os
import pickle
import sys
from typing import IO, Any

from hermes_envs._definitions import definition_site

from ._policies import POLICIES
from ._process import read_message, write_message
from ._server import FakeOpenAIServer

__all__ = ["main"]


def _decode_setting(name: str, data: bytes) -> Any:
    value = pickle.loads(data)
    if name == "policy":
        spec, factories = value
        for name, factory in factories.items():  # the parent's own registrations, unknown to this process
            if POLICIES.find(name) is not factory:
                POLICIES.register(name, factory, site=definition_site(factory))
        return spec
    return value


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    srv: FakeOpenAIServer | None = None
    while True:
        try:
            op, args = read_message(stdin)
        except EOFError:  # the parent is gone: stop serving
            break
        try:
            if op == "start":
                path, encoded = args
                sys.path[:] = [*path, *(p for p in sys.path if p not in path)]
                settings = {}
                for name, data in encoded.items():
                    try:
                        settings[name] = _decode_setting(name, data)
                    except Exception as e:
                        raise ValueError(
                            f"the fake server process could not load the {name} it was given: "
                            f"{type(e).__name__}: {e}.\nFix: define it in a module the server process can "
                            "import (on sys.path, not a test file loaded with --import-mode=importlib), or use "
                            "process=False."
                        ) from e
                srv = FakeOpenAIServer(**settings).start()
                value: Any = srv.port
            elif op == "stop" and srv is None:  # the start failed: nothing to stop
                write_message(stdout, ("ok", ([], [], (0, 0))))
                return 0
            elif srv is None:
                raise RuntimeError(f"the fake server process got {op!r} before 'start'")
            elif op == "records":
                value = (srv.calls, srv.misses)
            elif op == "counts":
                value = (srv.request_count, srv.miss_count)
            elif op == "reset":
                srv.reset()
                value = None
            elif op == "set":
                name, data = args
                setattr(srv, name, _decode_setting(name, data))
                value = None
            elif op == "set_faults":
                srv.set_faults(pickle.loads(args[0]), args[1])
                value = None
            elif op == "stop":
                srv.stop()
                write_message(stdout, ("ok", (srv.calls, srv.misses, (srv.request_count, srv.miss_count))))
                return 0
            else:
                raise RuntimeError(f"unknown command {op!r}")
        except Exception as e:
            write_message(stdout, ("error", str(e) or repr(e)))
            continue
        write_message(stdout, ("ok", value))
    if srv is not None:
        srv.stop()
    return 0


def main() -> int:
    """Child entry point: serve commands from stdin; stdout carries only replies (prints go to stderr)."""
    # The replies get a private copy of fd 1; fd 1 itself then points at stderr, so that a print (or a C library
    # writing to fd 1) cannot corrupt the protocol.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return _serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    sys.exit(main())
