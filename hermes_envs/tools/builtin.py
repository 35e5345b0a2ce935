"""Built-in toolsets on the default registry: ``terminal`` (a shell) and ``file`` (read, write, search, patch).

Every tool works in the sandbox of the dispatching task id; file paths are relative to the task's working directory
and may not leave the task's folder (in a container-style sandbox, absolute paths are the task's own). On ``local``
with ``host_paths`` on (the default outside the conformance kit), an absolute path outside the task's folder is the
host's own file, as upstream's local file tools (and the task's shell) reach it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from ._sandbox_config import sandbox_environment, withheld_variables_note
from ._task_files import FileTooLargeError, UnsafeFileError
from .registry import ToolRegistry, registry
from .sandbox import Sandbox, get_sandbox

__all__ = ["MAX_READ_BYTES", "register_builtin_tools", "search_sandbox"]

MAX_READ_BYTES = 200_000
MAX_MATCHES = 200
MAX_SEARCH_FILE_BYTES = 2_000_000
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"})


def _box(task_id: str) -> Sandbox:
    box = get_sandbox(task_id)
    assert box is not None
    return box


def _host_target(box: Sandbox, path: object) -> Path | None:
    """The host file an absolute ``path`` names when this call reaches it directly (``local`` backend, its
    ``host_paths`` setting on, the path outside every task's folder); None: the path goes through the task's folder
    (and is refused there if it leaves it, e.g. into another rollout's sandbox)."""
    if not isinstance(path, str) or not path.startswith("/") or "\x00" in path:
        return None
    if box.backend_class.name != "local" or box.backend_class.container_paths or not box.config.host_paths:
        return None
    target = Path(os.path.normpath(path))
    sandboxes = (
        box.tree.parent
    )  # every task's folder: its own is walked confined, another's is refused there too
    if target == sandboxes or sandboxes in target.parents:
        return None
    return target


def _host_regular(target: Path) -> os.stat_result:
    """stat of a host file the tools may read: a regular file (a FIFO or device would block or never end)."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"no file {str(target)!r} on this host. Fix: check the path (list its folder with the terminal), or "
            "write the file first."
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{str(target)!r} is a folder, not a file. Fix: name a file in it.")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFileError(f"{str(target)!r} is not a regular file (a FIFO, socket or device); not read.")
    return st


def _read_host(target: Path, limit: int) -> tuple[bytes, int]:
    """(at most ``limit`` bytes of a host file, its size)."""
    size = _host_regular(target).st_size
    with open(target, "rb") as fh:
        return fh.read(limit), size


def _write_host(box: Sandbox, target: Path, data: bytes) -> None:
    """Write a host file (parent folders made), bounded by the sandbox's ``max_file_size_mb``."""
    limit = box.config.max_file_bytes
    if limit is not None and len(data) > limit:
        raise FileTooLargeError(
            f"{len(data)} bytes for {str(target)!r} is over this sandbox's max_file_size_mb. Fix: write less."
        )
    if target.exists():
        _host_regular(target)  # never write into a FIFO or device
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def terminal(command: str, timeout: int | None = None, *, task_id: str) -> str:
    """Run a shell command in your private working directory and return its output and exit code.

    The shell persists between calls: the current directory and exported variables carry over. Output is
    stdout and stderr merged; very long output is cut in the middle.

    Args:
        command: The bash command line to run.
        timeout: Seconds before the command is killed (default: the environment's terminal timeout).
    """
    box = _box(task_id)
    result = box.execute(command, timeout)
    output = result.output
    if result.exit_code:  # a failure naming a variable the trainer has and the command lacks says why
        output += withheld_variables_note(output, sandbox_environment(box.config))
    return json.dumps(
        {"output": output, "exit_code": result.exit_code, "error": result.error}, ensure_ascii=False
    )


def read_file(path: str, *, task_id: str) -> dict:
    """Read a text file from your working directory.

    Args:
        path: File path, relative to the working directory.
    """
    box = _box(task_id)
    host = _host_target(box, path)
    if host is not None:
        data, size = _read_host(host, MAX_READ_BYTES)
    else:
        data, size = box.read_bounded(path, MAX_READ_BYTES)  # a huge (or sparse) file is never read whole
    truncated = size > len(data)
    text = data.decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[... file truncated: showing the first {len(data)} of {size} bytes ...]"
    shown = str(host) if host is not None else box.relative(box.resolve_path(path))
    return {"path": shown, "content": text, "truncated": truncated}


def write_file(path: str, content: str, *, task_id: str) -> dict:
    """Write a text file in your working directory (parent folders are created; an existing file is replaced).

    Args:
        path: File path, relative to the working directory.
        content: The full new content of the file.
    """
    box = _box(task_id)
    data = content.encode("utf-8")
    host = _host_target(box, path)
    if host is not None:
        _write_host(box, host, data)
        return {"path": str(host), "bytes_written": len(data)}
    target = box.write_bytes(path, data)
    return {"path": box.relative(target), "bytes_written": len(data)}


def search_files(pattern: str, path: str = ".", *, task_id: str) -> dict:
    """Search file contents under a folder of your working directory for a regular expression (like grep -rn).

    Args:
        pattern: A Python regular expression (searched as plain text if it is not a valid one).
        path: Folder or file to search, relative to the working directory.
    """
    box = _box(task_id)
    host = _host_target(box, path)
    if host is not None:
        return _search(pattern, _host_files(host))
    return search_sandbox(box, pattern, path)


def patch(path: str, old: str, new: str, *, task_id: str) -> dict:
    """Replace one exact occurrence of a text in a file of your working directory.

    Args:
        path: File path, relative to the working directory.
        old: The exact text to replace; it must occur exactly once in the file.
        new: The replacement text.
    """
    box = _box(task_id)
    if not old:
        raise ValueError("patch needs a non-empty 'old' text to find. Fix: copy the exact lines to change.")
    host = _host_target(box, path)
    if host is not None:
        limit = box.config.max_file_bytes or _host_regular(host).st_size
        text = _read_host(host, limit)[0].decode("utf-8", errors="replace")
    else:
        text = box.read_text(path)
    count = text.count(old)
    if count == 0:
        raise ValueError(
            f"the text to replace was not found in {path!r}. Fix: read the file and copy the exact text "
            "(whitespace and indentation included)."
        )
    if count > 1:
        raise ValueError(
            f"the text to replace occurs {count} times in {path!r}; patch replaces exactly one. "
            "Fix: include more surrounding lines in 'old' so it matches once."
        )
    if host is not None:
        _write_host(box, host, text.replace(old, new, 1).encode("utf-8"))
        return {"path": str(host), "replacements": 1}
    box.write_text(path, text.replace(old, new, 1))
    return {"path": box.relative(box.resolve_path(path)), "replacements": 1}


def search_sandbox(box: Sandbox, pattern: str, path: str = ".") -> dict:
    """grep -rn over the sandbox: ``{"matches": [{"path", "line", "text"}], "truncated": bool}``.

    Symlinks are not followed; FIFOs, devices, hard-linked, binary and very large files are skipped.
    """
    files = box.files.files(path, skip_dirs=_SKIP_DIRS, max_bytes=MAX_SEARCH_FILE_BYTES)
    return _search(pattern, ((box.files.display(parts), data) for parts, data in files))


def _host_files(top: Path) -> Iterator[tuple[str, bytes]]:
    """(path, content) of the regular host files under ``top`` (or ``top`` itself), symlinks not followed, skipped
    folders and files over the search size left out."""
    if not top.is_dir():
        _host_regular(top)  # a missing path or a FIFO says so
        walk: Iterator[tuple[str, list[str], list[str]]] = iter([(str(top.parent), [], [top.name])])
    else:
        walk = os.walk(top)
    for folder, dirs, names in walk:
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            full = os.path.join(folder, name)
            try:
                st = os.lstat(full)
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SEARCH_FILE_BYTES:
                    continue
                with open(full, "rb") as fh:
                    yield full, fh.read(MAX_SEARCH_FILE_BYTES)
            except OSError:
                continue  # unreadable on the host: skipped as grep -s would


def _search(pattern: str, files: Iterator[tuple[str, bytes]]) -> dict:
    """grep -rn over ``(shown path, content)`` pairs."""
    try:
        regex = re.compile(pattern)
    except re.error:
        regex = re.compile(re.escape(pattern))
    matches: list[dict] = []
    truncated = False
    for shown, data in files:
        if b"\x00" in data[:8192]:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(matches) >= MAX_MATCHES:
                    truncated = True
                    break
                matches.append({"path": shown, "line": number, "text": line[:500]})
        if truncated:
            break
    return {"matches": matches, "truncated": truncated}


def register_builtin_tools(target: ToolRegistry) -> None:
    """Register the ``terminal`` and ``file`` toolsets on ``target`` (done for the default registry on import)."""
    description = (
        "Run a bash command in your private working directory; returns its output (stdout and stderr merged) "
        "and exit code. The shell persists between calls: the current directory and exported variables carry "
        "over. Very long output is cut in the middle."
    )
    target.tool(terminal, toolset="terminal", description=description)
    for fn in (read_file, write_file, search_files, patch):
        target.tool(fn, toolset="file")


if "terminal" not in registry:
    register_builtin_tools(registry)
