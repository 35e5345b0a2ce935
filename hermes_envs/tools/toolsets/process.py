"""``terminal``'s background-process tool (``process``, in the ``terminal`` toolset beside ``terminal`` itself, as
upstream lists it): start a command in the task's sandbox without waiting, then list, poll, read the log, wait,
kill, or write to its stdin.

Upstream starts background commands with ``terminal(background=true)``; our ``terminal`` has no such flag, so
``process(action="start", command=...)`` does it. Each process logs to ``.hermes_proc/<id>.log`` in the sandbox and
reads stdin from a FIFO; the sandbox's cleanup kills whatever still runs. The tool reads those files and writes
into the FIFO through the file tools' path rule (walked without following a link out of the task; only a regular
file is read, only a FIFO written), so a link the agent plants there cannot point the trainer at a host file.
"""

from __future__ import annotations

import os
import shlex
import time
from typing import Any

from hermes_envs.errors import SandboxError

from .._task_files import UnsafeFileError
from ..registry import ToolRegistry
from ._limits import timeout_for
from ._taskstate import TaskStore
from ._tooling import register_family, schema

__all__ = ["register_process_tools"]

ACTIONS = ["start", "list", "poll", "log", "wait", "kill", "write", "submit"]
_DIR = ".hermes_proc"
_LOG_MAX = 1 << 20  # the last MB of a log is what poll, log and wait look at
_STORE: TaskStore[dict[str, dict[str, Any]]] = TaskStore(dict)


def _box(task_id: str) -> Any:
    from ..sandbox import get_sandbox

    box = get_sandbox(task_id)
    assert box is not None
    return box


def _state_file(box: Any, name: str, limit: int, *, tail: bool = False) -> str:
    """The text of ``.hermes_proc/<name>`` ("" when missing or not a plain file inside the task)."""
    try:
        data, _size = box.files.read(f"{_DIR}/{name}", limit, tail=tail)
    except (OSError, SandboxError):
        return ""
    return data.decode("utf-8", errors="replace")


def _status(box: Any, sid: str, info: dict[str, Any]) -> dict[str, Any]:
    code = _state_file(box, f"{sid}.exit", 32).strip()
    if code.lstrip("-").isdigit():
        info["status"], info["exit_code"] = "exited", int(code)
    elif info.get("status") != "killed":
        alive = box.execute(
            f"kill -0 {info['pid']} 2>/dev/null && echo alive || echo gone", 10, fresh=False
        ).output.strip()
        if alive.endswith("gone") and info.get("status") == "running":
            info["status"] = "exited"
            info.setdefault("exit_code", None)
    return {
        "session_id": sid,
        "command": info["command"],
        "status": info["status"],
        "exit_code": info.get("exit_code"),
        "pid": info["pid"],
        "uptime_seconds": round(time.monotonic() - info["started"], 1),
    }


def _log(box: Any, sid: str) -> str:
    return _state_file(box, f"{sid}.log", _LOG_MAX, tail=True)


def process(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    action = str(args.get("action", ""))
    procs = _STORE.get(task_id)
    box = _box(task_id)
    if action == "start":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return {"error": "action 'start' needs 'command'."}
        sid = f"proc_{len(procs) + 1}"
        box.files.mkdir(_DIR)
        for suffix in ("in", "log", "exit"):  # whatever the agent left under these names (links too) goes
            box.files.remove(f"{_DIR}/{sid}.{suffix}")
        d = shlex.quote(box.shell_path(_DIR))  # absolute: the shell may have moved elsewhere
        inner = shlex.quote(f"sh -c {shlex.quote(command)}; echo $? > {d}/{sid}.exit")
        script = (  # the FIFO is made before the call returns (only the process itself runs in the background)
            f"mkfifo {d}/{sid}.in && (sleep 2147483647 > {d}/{sid}.in &) && "
            f"{{ nohup sh -c {inner} < {d}/{sid}.in > {d}/{sid}.log 2>&1 & echo $!; }}"
        )
        out = box.execute(script, 30, fresh=False).output.strip().splitlines()
        pid = next((line for line in reversed(out) if line.strip().isdigit()), None)
        if pid is None:
            return {"error": f"could not start the process: {' '.join(out)[:300]}"}
        procs[sid] = {"command": command, "pid": int(pid), "status": "running", "started": time.monotonic()}
        return {"session_id": sid, "pid": int(pid), "status": "running"}
    if action == "list":
        return {"processes": [_status(box, sid, info) for sid, info in procs.items()]}
    sid = str(args.get("session_id") or "")
    info = procs.get(sid)
    if info is None:
        return {"error": f"No process with session_id '{sid}'. Known: {sorted(procs)}"}
    if action == "poll":
        status = _status(box, sid, info)
        return {**status, "output_preview": _log(box, sid)[-1000:]}
    if action == "log":
        lines = _log(box, sid).splitlines()
        offset, limit = int(args.get("offset") or 0), int(args.get("limit") or 200)
        chunk = lines[-limit:] if not offset else lines[offset : offset + limit]
        return {"session_id": sid, "output": "\n".join(chunk), "total_lines": len(lines)}
    if action == "wait":
        deadline = time.monotonic() + min(float(args.get("timeout") or 180), timeout_for("process") - 10)
        while time.monotonic() < deadline:
            if _status(box, sid, info)["status"] != "running":
                break
            time.sleep(0.2)
        status = _status(box, sid, info)
        if status["status"] == "running":
            status["timeout_note"] = "still running; wait again or kill it"
        return {**status, "output": _log(box, sid)[-4000:]}
    if action == "kill":
        box.execute(
            f"kill -TERM {info['pid']} 2>/dev/null; pkill -TERM -P {info['pid']} 2>/dev/null; true",
            10,
            fresh=False,
        )
        info["status"] = "killed"
        return {"session_id": sid, "status": "killed"}
    if action in ("write", "submit"):
        data = str(args.get("data") or "") + ("\n" if action == "submit" else "")
        fd = None
        for _ in range(40):  # non-blocking: an exited process has no reader and must not hang the call; a
            try:  # process started a moment ago may not have opened its stdin yet
                fd = box.files.open_fifo(f"{_DIR}/{sid}.in")
                break
            except UnsafeFileError:
                return {"error": f"process '{sid}''s input should be its FIFO; something else replaced it."}
            except OSError:
                if _status(box, sid, info)["status"] != "running":
                    break
                time.sleep(0.05)
        if fd is None:
            return {"error": f"process '{sid}' is not reading its stdin (it has exited)."}
        try:
            os.write(fd, data.encode())
        finally:
            os.close(fd)
        return {"session_id": sid, "status": "written", "bytes": len(data.encode())}
    return {"error": f"Unknown action '{action}'. Use: {', '.join(ACTIONS)}"}


DESCRIPTION = (
    "Manage background processes. Actions: 'start' (run 'command' in the background), 'list' (show all), 'poll' "
    "(check status + new output), 'log' (full output with pagination), 'wait' (block until done or timeout), "
    "'kill' (terminate), 'write' (send raw stdin data without newline), 'submit' (send data + Enter)."
)
PARAMS = schema(
    {
        "action": {
            "type": "string",
            "enum": ACTIONS,
            "description": "Action to perform on background processes",
        },
        "command": {"type": "string", "description": "Command to start in the background (for 'start')"},
        "session_id": {
            "type": "string",
            "description": "Process session ID. Required for all actions except 'list'.",
        },
        "data": {
            "type": "string",
            "description": "Text to send to process stdin (for 'write' and 'submit' actions)",
        },
        "timeout": {
            "type": "integer",
            "description": "Max seconds to block for 'wait' action.",
            "minimum": 1,
        },
        "offset": {
            "type": "integer",
            "description": "Line offset for 'log' action (default: last 200 lines)",
        },
        "limit": {"type": "integer", "description": "Max lines to return for 'log' action", "minimum": 1},
    },
    ["action"],
)


def register_process_tools(target: ToolRegistry) -> None:
    register_family(target, "terminal", "process", [("process", DESCRIPTION, PARAMS, process)])
