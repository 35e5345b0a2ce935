"""The ``code_execution`` toolset (``execute_code``): a Python script, run in the task's sandbox, that calls tools.

The script imports ``hermes_tools`` (written next to it, from ``_script_api``), with upstream's functions and
signatures: ``web_search``, ``web_extract``, ``read_file``, ``write_file``, ``search_files`` and ``patch`` send each
call over a Unix socket in the sandbox to this process, which dispatches it for the same task id, so the script's
tool calls see the same files, tabs and state as the agent's; ``terminal`` runs in the script's own sandbox. Result as upstream: ``{"status", "output", "tool_calls_made",
"duration_seconds"}`` (plus ``error`` when the script failed).
"""

from __future__ import annotations

import functools
import json
import secrets
import shlex
import socket
import threading
import time
from pathlib import Path
from typing import Any

from hermes_envs.errors import SandboxError

from ..registry import ToolRegistry
from ._limits import rpc_request_seconds, timeout_for
from ._script_api import TOOLS as _API_TOOLS
from ._tooling import register_family, schema

__all__ = ["SANDBOX_TOOLS", "register_code_execution_tools"]

#: What scripts can import from ``hermes_tools`` (upstream's list), when the registry has the tool.
SANDBOX_TOOLS = _API_TOOLS
#: Answered by the script itself (see ``_script_api``), never sent back over the socket.
_LOCAL_TOOLS = frozenset({"terminal"})
MAX_TOOL_CALLS = 50
_DIR = ".hermes_exec"
_MAX_REQUEST_BYTES = 64 << 20
_registry: ToolRegistry | None = None


@functools.cache
def _api_source() -> str:
    return Path(__file__).with_name("_script_api.py").read_text(encoding="utf-8")


def _module_source(tools: list[str]) -> str:
    """The ``hermes_tools.py`` written next to a script: the API module, keeping only ``tools``."""
    return f"{_api_source()}\n_keep_only({tools!r})\n"


class _Rpc(threading.Thread):
    """Serves the script's tool calls on a Unix socket until stopped: each connection on a thread of its own, so a
    connection that never sends a request holds up nothing (it is dropped after a while, without a traceback)."""

    def __init__(self, path: str, token: str, task_id: str, allowed: set[str]) -> None:
        super().__init__(daemon=True, name="hermes-execute-code-rpc")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.token, self.task_id, self.allowed = token, task_id, allowed
        self.calls = 0  # tool calls dispatched (never more than MAX_TOOL_CALLS)
        self._lock = threading.Lock()
        self._workers: list[threading.Thread] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            worker = threading.Thread(
                target=self._answer, args=(conn,), daemon=True, name="hermes-execute-code-call"
            )
            self._workers = [w for w in self._workers if w.is_alive()] + [worker]
            worker.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(
                    rpc_request_seconds()
                )  # a request is one short line: a silent client is dropped
                request = self._read(conn)
                conn.settimeout(timeout_for("code_execution"))
                conn.sendall((json.dumps(self._serve(request)) + "\n").encode())
            except (
                OSError
            ):  # the script hung up, went silent, or the run ended: nobody is waiting for a reply
                return

    @staticmethod
    def _read(conn: socket.socket) -> bytes:
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
            if len(data) > _MAX_REQUEST_BYTES:
                break
        return data

    def _serve(self, data: bytes) -> dict[str, Any]:
        try:
            request = json.loads(data)
        except ValueError:
            return {"error": "malformed request"}
        if not isinstance(request, dict) or request.get("token") != self.token:
            return {"error": "bad token"}
        name = request.get("tool")
        if name not in self.allowed:
            return {"error": f"tool {name!r} is not available to scripts; available: {sorted(self.allowed)}"}
        with self._lock:
            if self.calls >= MAX_TOOL_CALLS:
                return {"error": f"a script may make at most {MAX_TOOL_CALLS} tool calls"}
            self.calls += 1
        assert _registry is not None
        args = request.get("args")
        try:
            return {"result": _registry.dispatch(name, args if isinstance(args, dict) else {}, self.task_id)}
        except Exception as exc:
            return {"error": f"{type(exc).__name__}: {exc}"}

    def stop(self) -> None:
        self.stopped.set()
        self.join(2)
        self.sock.close()
        for worker in self._workers:
            worker.join(0.5)


def execute_code(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    from ..sandbox import get_sandbox

    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return {
            "status": "error",
            "error": "execute_code needs a non-empty 'code' string.",
            "tool_calls_made": 0,
        }
    box = get_sandbox(task_id)
    assert box is not None
    assert _registry is not None
    allowed = [t for t in SANDBOX_TOOLS if t in _registry]
    run_id = secrets.token_hex(4)
    # every file goes through the file tools' path rule: a link planted at .hermes_exec never leads out
    script, module, sock = (
        f"{_DIR}/script_{run_id}.py",
        f"{_DIR}/hermes_tools.py",
        f"{_DIR}/rpc_{run_id}.sock",
    )
    box.files.mkdir(_DIR)
    box.files.remove(module)  # ours to write: whatever the agent put under its name (a link too) goes first
    box.write_text(module, _module_source(allowed))
    box.write_text(script, code)
    host_sock = str(box.resolve_path(sock))
    shell_sock = box.shell_path(sock)
    if max(len(host_sock), len(shell_sock)) > 100:
        box.files.remove(script)
        return {
            "status": "error",
            "error": f"the sandbox path is too long for a socket: {host_sock}",
            "tool_calls_made": 0,
        }
    token = secrets.token_hex(16)
    rpc = _Rpc(host_sock, token, task_id, set(allowed) - _LOCAL_TOOLS)
    rpc.start()
    start = time.monotonic()
    try:
        command = (
            f"HERMES_RPC_SOCKET={shlex.quote(shell_sock)} HERMES_RPC_TOKEN={token} "
            f"PYTHONPATH={shlex.quote(box.shell_path(_DIR))} python3 {shlex.quote(box.shell_path(script))}"
        )
        result = box.execute(command, timeout_for("code_execution") - 5)
    finally:
        rpc.stop()
        for path in (script, sock):
            try:
                box.files.remove(path)
            except (OSError, SandboxError):
                pass
    out: dict[str, Any] = {
        "status": "success" if result.exit_code == 0 else "error",
        "output": result.output,
        "tool_calls_made": rpc.calls,
        "duration_seconds": round(time.monotonic() - start, 2),
    }
    if result.exit_code != 0:
        out["error"] = f"script exited with code {result.exit_code}"
    return out


DESCRIPTION = (
    "Run a Python script that can call Hermes tools programmatically. Use this when you need 3+ tool calls with "
    "processing logic between them, need to filter/reduce large tool outputs before they enter your context, or "
    "need conditional branching. Scripts import from hermes_tools: web_search, web_extract, read_file, write_file, "
    "search_files, patch, terminal. Print your final result to stdout."
)
PARAMS = schema(
    {
        "code": {
            "type": "string",
            "description": "Python code to execute. Import tools with `from hermes_tools import web_search, read_file, ...` and "
            "print your final result to stdout.",
        }
    },
    ["code"],
)


def register_code_execution_tools(target: ToolRegistry) -> None:
    global _registry
    _registry = target
    register_family(
        target, "code_execution", "code_execution", [("execute_code", DESCRIPTION, PARAMS, execute_code)]
    )
