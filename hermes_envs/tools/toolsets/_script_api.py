"""The ``hermes_tools`` module that ``execute_code`` scripts import (copied into the sandbox, run by its python3).

Every function keeps upstream's signature (``read_file(path, offset=1, limit=2000)``, ``patch(path, old_string,
new_string, replace_all=False, mode="replace")`` ...) so a script written for hermes-agent runs unchanged. Tool
calls go over the run's Unix socket to the agent process, which dispatches them for the same task; arguments our
tools do not take (pagination, globs, ``replace_all``) are applied here, on the tool's result. ``terminal`` runs its
command in a child of the script: the script already is a command of the task's shell, in its sandbox, so a call
back to the terminal tool would wait for the script itself to end.

Only the standard library: the sandbox's python3 has nothing else. ``execute_code`` appends ``_keep_only(...)``
with the tools the agent has, so the others raise ImportError as upstream's do.
"""

import fnmatch
import json
import os
import shlex
import socket
import subprocess
import time

_MAX_TERMINAL_OUTPUT = 50_000
TOOLS = ("web_search", "web_extract", "read_file", "write_file", "search_files", "patch", "terminal")


def _call(name, args):
    """Send one tool call to the agent process and return its parsed result (RuntimeError on a tool error)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(os.environ["HERMES_RPC_SOCKET"])
        request = {"token": os.environ["HERMES_RPC_TOKEN"], "tool": name, "args": args}
        conn.sendall((json.dumps(request) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
    reply = json.loads(data or b"{}")
    if "error" in reply:
        raise RuntimeError(reply["error"])
    try:
        return json.loads(reply["result"])
    except ValueError:
        return reply["result"]


def web_search(query, limit=5):
    """Search the web: ``{"data": {"web": [{"url", "title", "description"}, ...]}}``, at most ``limit`` hits."""
    result = _call("web_search", {"query": query})
    hits = result.get("data", {}).get("web") if isinstance(result, dict) else None
    if isinstance(hits, list):
        result["data"]["web"] = hits[: max(0, int(limit))]
    return result


def web_extract(urls, char_limit=None):
    """The text of up to 5 pages: ``{"results": [{"url", "title", "content", "error"}, ...]}``."""
    result = _call("web_extract", {"urls": [urls] if isinstance(urls, str) else list(urls)})
    if char_limit is not None and isinstance(result, dict):
        for page in result.get("results") or []:
            content = page.get("content") if isinstance(page, dict) else None
            if isinstance(content, str) and len(content) > char_limit:
                page["content"] = content[:char_limit] + f"\n[... cut at {char_limit} characters ...]"
    return result


def read_file(path, offset=1, limit=2000):
    """Lines ``offset`` .. ``offset + limit - 1`` (1-based) of a text file: ``{"content", "total_lines", ...}``."""
    result = _call("read_file", {"path": path})
    lines = result["content"].splitlines(keepends=True)
    start = max(1, int(offset)) - 1
    result["content"] = "".join(lines[start : start + max(0, int(limit))])
    result["total_lines"] = len(lines)
    return result


def write_file(path, content, cross_profile=False):
    """Write (replace) a text file; parent folders are created."""
    return _call("write_file", {"path": path, "content": content})


def patch(path=None, old_string=None, new_string=None, replace_all=False, mode="replace", patch=None):
    """Replace ``old_string`` with ``new_string`` in ``path`` (once, unless ``replace_all``)."""
    if mode != "replace" or patch is not None:
        raise ValueError(
            "patch(mode='patch') (V4A multi-file patches) is not available in hermes-envs scripts. "
            "Fix: call patch(path, old_string, new_string) for each change."
        )
    if not path or not old_string:
        raise ValueError("patch needs path and a non-empty old_string. Fix: pass the exact text to replace.")
    if not replace_all:
        return _call("patch", {"path": path, "old": old_string, "new": new_string or ""})
    text = _call("read_file", {"path": path})
    if text.get("truncated"):
        raise ValueError(f"{path!r} is too large to patch with replace_all. Fix: patch it piece by piece.")
    count = text["content"].count(old_string)
    if count == 0:
        raise ValueError(
            f"the text to replace was not found in {path!r}. Fix: read the file and copy it exactly."
        )
    _call("write_file", {"path": path, "content": text["content"].replace(old_string, new_string or "")})
    return {"path": text.get("path", path), "replacements": count}


def search_files(
    pattern, target="content", path=".", file_glob=None, limit=50, offset=0, output_mode="content", context=0,
    order=None,
):  # fmt: skip
    """Search file contents for a regex (``target="content"``) or find files by name glob (``target="files"``)."""
    if target in ("files", "find"):
        found: list[str] = []
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found.extend(os.path.join(folder, f) for f in sorted(files) if fnmatch.fnmatch(f, pattern))
        page = found[offset : offset + limit]
        return {"files": [os.path.normpath(f) for f in page], "total_count": len(found),
                "truncated": offset + len(page) < len(found)}  # fmt: skip
    result = _call("search_files", {"pattern": pattern, "path": path})
    matches = [
        m for m in result.get("matches", [])
        if not file_glob or fnmatch.fnmatch(os.path.basename(m.get("path", "")), file_glob)
    ]  # fmt: skip
    total = len(matches)
    if output_mode == "files_only":
        result = {"files": sorted({m["path"] for m in matches})}
    elif output_mode == "count":
        counts: dict[str, int] = {}
        for m in matches:
            counts[m["path"]] = counts.get(m["path"], 0) + 1
        result = {"counts": counts}
    else:
        page = matches[offset : offset + limit]
        result = {"matches": page, "truncated": bool(result.get("truncated")) or offset + len(page) < total}
    result["total_count"] = total
    return result


def terminal(command, timeout=None, workdir=None):
    """Run a shell command in the sandbox (a child of this script): ``{"output", "exit_code"}``, output merged."""
    try:
        done = subprocess.run(
            ["bash", "-c", command], cwd=workdir or None, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, timeout=timeout,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        output = (exc.output or b"").decode("utf-8", "replace")
        return {"output": output, "exit_code": 124, "error": f"command timed out after {timeout} s"}
    output = done.stdout.decode("utf-8", "replace")
    if len(output) > _MAX_TERMINAL_OUTPUT:
        half = _MAX_TERMINAL_OUTPUT // 2
        output = output[:half] + f"\n[... {len(output) - 2 * half} characters cut ...]\n" + output[-half:]
    return {"output": output, "exit_code": done.returncode}


def json_parse(text):
    """``json.loads`` that tolerates control characters in strings and a leading byte-order mark."""
    if isinstance(text, str) and text.startswith("\ufeff"):
        text = text[1:]
    return json.loads(text, strict=False)


def shell_quote(text):
    """Quote ``text`` for a shell command line (``terminal(f"cat {shell_quote(name)}")``)."""
    return shlex.quote(text)


def retry(fn, max_attempts=3, delay=2):
    """Call ``fn()`` until it returns without raising, at most ``max_attempts`` times, waiting longer each time."""
    for attempt in range(max_attempts):
        try:
            return fn()
        except Exception:
            if attempt + 1 >= max_attempts:
                raise
            time.sleep(delay * 2**attempt)


def _keep_only(names):
    """Remove the tools the agent does not have, so importing one fails as it does upstream."""
    for name in set(TOOLS) - set(names):
        globals().pop(name, None)
