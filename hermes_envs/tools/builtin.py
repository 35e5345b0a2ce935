"""Built-in toolsets on the default registry: ``terminal`` (a shell) and ``file`` (read, write, search, patch).

Every tool works in the sandbox of the dispatching task id; file paths are relative to the task's working directory
and may not leave the task's folder (in a container-style sandbox, absolute paths are the task's own).
"""

from __future__ import annotations

import json
import re

from ._sandbox_config import sandbox_environment, withheld_variables_note
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
    data, size = box.read_bounded(path, MAX_READ_BYTES)  # a huge (or sparse) file is never read whole
    truncated = size > len(data)
    text = data.decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[... file truncated: showing the first {len(data)} of {size} bytes ...]"
    return {"path": box.relative(box.resolve_path(path)), "content": text, "truncated": truncated}


def write_file(path: str, content: str, *, task_id: str) -> dict:
    """Write a text file in your working directory (parent folders are created; an existing file is replaced).

    Args:
        path: File path, relative to the working directory.
        content: The full new content of the file.
    """
    box = _box(task_id)
    target = box.write_bytes(path, content.encode("utf-8"))
    return {"path": box.relative(target), "bytes_written": len(content.encode("utf-8"))}


def search_files(pattern: str, path: str = ".", *, task_id: str) -> dict:
    """Search file contents under a folder of your working directory for a regular expression (like grep -rn).

    Args:
        pattern: A Python regular expression (searched as plain text if it is not a valid one).
        path: Folder or file to search, relative to the working directory.
    """
    return search_sandbox(_box(task_id), pattern, path)


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
    box.write_text(path, text.replace(old, new, 1))
    return {"path": box.relative(box.resolve_path(path)), "replacements": 1}


def search_sandbox(box: Sandbox, pattern: str, path: str = ".") -> dict:
    """grep -rn over the sandbox: ``{"matches": [{"path", "line", "text"}], "truncated": bool}``.

    Symlinks are not followed; FIFOs, devices, hard-linked, binary and very large files are skipped.
    """
    try:
        regex = re.compile(pattern)
    except re.error:
        regex = re.compile(re.escape(pattern))
    matches: list[dict] = []
    truncated = False
    files = box.files.files(path, skip_dirs=_SKIP_DIRS, max_bytes=MAX_SEARCH_FILE_BYTES)
    for parts, data in files:
        if b"\x00" in data[:8192]:
            continue  # binary
        shown = box.files.display(parts)
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
