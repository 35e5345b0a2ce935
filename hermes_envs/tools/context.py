"""ToolContext: what ``compute_reward`` uses to inspect and verify a rollout's work, in that rollout's sandbox.

Its commands see the rollout's files but never the agent's shell: each runs in a shell started for it (its own PID
namespace where the sandbox has one), so functions, aliases, PATH, cwd, traps or variables the agent left in its
shell, and the agent's background processes, cannot change what the reward runs or what it is told.

The synchronous methods match the upstream guide; each has an awaitable twin (``aterminal``, ``aread_file`` ...) that
runs in a worker thread, so a reward that awaits them never stalls the other rollouts on the event loop.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hermes_envs.errors import ConfigError, PathEscapeError, SandboxError

from ._runtime import EnvRuntime, bound_runtime, using_runtime
from ._sandbox import fresh_shells
from .builtin import search_sandbox
from .context_web import WebBrowserContextMixin
from .registry import ToolRegistry
from .registry import registry as default_registry
from .sandbox import Sandbox, cleanup_sandbox, get_sandbox, run_off_loop

__all__ = ["ToolContext"]


class ToolContext(WebBrowserContextMixin):
    """Access to the sandbox of ``task_id`` (the same one the rollout's tools used).

    ``runtime`` is the env's :class:`EnvRuntime` its sandbox lookups and tool calls run with (the env base passes
    its own); without one, the runtime bound where the ToolContext is made, else the process-wide defaults.
    """

    def __init__(
        self, task_id: str, *, registry: ToolRegistry | None = None, runtime: EnvRuntime | None = None
    ):
        if not isinstance(task_id, str) or not task_id:
            raise ConfigError(
                f"ToolContext's task_id should be a non-empty str; got {task_id!r}. "
                "Fix: pass the rollout's task_id (the one its tools ran under)."
            )
        self.task_id = task_id
        self.registry = registry if registry is not None else default_registry
        self.runtime = runtime if runtime is not None else bound_runtime()

    def __repr__(self) -> str:
        return f"ToolContext(task_id={self.task_id!r})"

    @property
    def sandbox(self) -> Sandbox:
        with using_runtime(self.runtime):  # created (if it is not yet) with the env's settings
            box = get_sandbox(self.task_id)
        assert box is not None
        return box

    @property
    def workdir(self) -> Path:
        return self.sandbox.workdir

    # ------------------------------------------------------------ sync (upstream-compatible)
    def terminal(self, command: str, timeout: int = 180) -> dict:
        """Run a shell command in the rollout's sandbox: ``{"exit_code": int, "output": str}``, in a fresh shell
        (the rollout's files, none of its shell state; see the module docstring), starting in its working folder."""
        return self.sandbox.run(command, timeout, fresh=True)

    def read_file(self, path: str) -> str:
        """The text of a file of the sandbox (relative to its working directory; absolute paths are the task's own
        in a container-style sandbox). Raises FileNotFoundError, IsADirectoryError, PathEscapeError (a
        PermissionError: the path leaves the task's folder), UnsafeFileError (not a regular file, or hard-linked),
        FileTooLargeError (over ``max_file_size_mb``)."""
        return self.sandbox.read_text(path)

    def write_file(self, path: str, content: str) -> None:
        """Create or replace a text file in the sandbox (parent folders made). Raises like :meth:`read_file`."""
        self.sandbox.write_text(path, content)

    def upload_file(self, local_path: str | os.PathLike[str], remote_path: str) -> dict[str, Any]:
        """Copy a file from this machine into the sandbox at ``remote_path`` (binary-safe).

        Returns upstream's shape: ``{"exit_code": 0, "output": ""}``, or ``{"exit_code": -1, "output": "Local file
        not found: ..."}`` when there is no such local file. A ``remote_path`` outside the task's folder raises
        PathEscapeError."""
        source = Path(local_path)
        if not source.is_file():
            return {"exit_code": -1, "output": f"Local file not found: {os.fspath(local_path)}"}
        self.sandbox.write_bytes(remote_path, source.read_bytes())
        return {"exit_code": 0, "output": ""}

    def upload_dir(self, local_dir: str | os.PathLike[str], remote_dir: str) -> list[dict[str, Any]]:
        """Copy a folder from this machine into the sandbox (merged into ``remote_dir``).

        Returns one :meth:`upload_file` result per file, in sorted order (upstream's shape), or
        ``[{"exit_code": -1, "output": "Local directory not found: ..."}]``."""
        source = Path(local_dir)
        if not source.is_dir():
            return [{"exit_code": -1, "output": f"Local directory not found: {os.fspath(local_dir)}"}]
        box = self.sandbox
        box.files.mkdir(remote_dir)
        results = []
        for file in sorted(source.rglob("*")):
            if file.is_file():
                target = remote_dir.rstrip("/") + "/" + file.relative_to(source).as_posix()
                box.write_bytes(target, file.read_bytes())
                results.append({"exit_code": 0, "output": ""})
        return results

    def download_file(self, remote_path: str, local_path: str | os.PathLike[str]) -> dict[str, Any]:
        """Copy a file out of the sandbox to ``local_path`` on this machine.

        Returns upstream's shape: ``{"success": True, "bytes": n}``, or ``{"success": False, "error": ...}`` when the
        file is missing, a folder, or not a regular file. A path outside the task's folder raises PathEscapeError."""
        try:
            data = self.sandbox.read_bytes(remote_path)
        except PathEscapeError:
            raise
        except (OSError, SandboxError) as exc:
            return {"success": False, "error": f"Failed to read remote file {remote_path!r}: {exc}"}
        target = Path(local_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return {"success": True, "bytes": len(data)}

    def download_dir(self, remote_dir: str, local_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
        """Copy a sandbox folder to ``local_dir``: one :meth:`download_file` result per file (upstream's shape), or
        ``[{"success": False, "error": ...}]`` when the folder is missing or empty. Symlinks are recreated as links,
        never followed out; FIFOs and hard-linked files are skipped."""
        box = self.sandbox
        if not box.files.is_dir(remote_dir):
            return [{"success": False, "error": f"Remote directory is empty or missing: {remote_dir}"}]
        base = Path(local_dir)
        results: list[dict[str, Any]] = []
        with box.files.walk(remote_dir) as top:
            depth = len(top.parts)
        for parts, data in box.files.files(remote_dir):
            target = base.joinpath(*parts[depth:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            results.append({"success": True, "bytes": len(data)})
        for parts, link_target in box.files.symlinks(remote_dir):
            link = base.joinpath(*parts)
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.is_symlink() and not link.exists():
                os.symlink(link_target, link)
        if not results:
            return [{"success": False, "error": f"Remote directory is empty or missing: {remote_dir}"}]
        return results

    def search(self, query: str, path: str = ".") -> dict:
        """grep -rn in the sandbox: ``{"matches": [{"path", "line", "text"}], "truncated": bool}``."""
        return search_sandbox(self.sandbox, query, path)

    def call_tool(self, name: str, args: dict) -> str:
        """Call a registered tool in this sandbox; returns its raw string result, or an ``{"error": ...}`` JSON
        string when the tool is unknown or fails (as the agent loop would show it to the model). Commands the tool
        runs go to fresh shells, as :meth:`terminal`'s do (the ``process`` tool still looks at the agent's own)."""
        if name not in self.registry:
            return json.dumps(
                {"error": f"Unknown tool '{name}'. Available tools: {sorted(self.registry.names())}"}
            )
        try:
            # the env's settings and model endpoint; the tool's commands, like terminal(), never run in the agent's
            # shell
            with using_runtime(self.runtime), fresh_shells():
                return self.registry.dispatch(name, args, self.task_id)
        except Exception as exc:
            return json.dumps({"error": f"Tool execution failed: {type(exc).__name__}: {exc}"})

    def cleanup(self) -> None:
        """Kill the sandbox's processes and remove its files. Idempotent."""
        cleanup_sandbox(self.task_id)

    # ------------------------------------------------------------ awaitable twins (run off the event loop)
    async def aterminal(self, command: str, timeout: int = 180) -> dict:
        return await self.sandbox.arun(command, timeout, fresh=True)

    async def aread_file(self, path: str) -> str:
        return await run_off_loop(self.read_file, path)

    async def awrite_file(self, path: str, content: str) -> None:
        await run_off_loop(self.write_file, path, content)

    async def aupload_file(self, local_path: str | os.PathLike[str], remote_path: str) -> dict[str, Any]:
        return await run_off_loop(self.upload_file, local_path, remote_path)

    async def aupload_dir(self, local_dir: str | os.PathLike[str], remote_dir: str) -> list[dict[str, Any]]:
        return await run_off_loop(self.upload_dir, local_dir, remote_dir)

    async def adownload_file(self, remote_path: str, local_path: str | os.PathLike[str]) -> dict[str, Any]:
        return await run_off_loop(self.download_file, remote_path, local_path)

    async def adownload_dir(self, remote_dir: str, local_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
        return await run_off_loop(self.download_dir, remote_dir, local_dir)

    async def asearch(self, query: str, path: str = ".") -> dict:
        return await run_off_loop(self.search, query, path)

    async def acall_tool(self, name: str, args: dict) -> str:
        return await run_off_loop(self.call_tool, name, args)

    async def acleanup(self) -> None:
        await run_off_loop(self.cleanup)

    # ------------------------------------------------------------ context managers
    def __enter__(self) -> ToolContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    async def __aenter__(self) -> ToolContext:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.acleanup()
