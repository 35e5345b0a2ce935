"""Bounds every family tool shares: a size cap on results (with a clear marker) and a timeout per call.

A tool that hangs must end with an error the agent loop records as a ToolError, never stall the rollout; a tool that
returns megabytes must not flood the model's context. Both limits are settings (``HERMES_TOOL_TIMEOUT``,
``HERMES_TOOL_MAX_RESULT_CHARS`` or :func:`set_limits`), with per-family default timeouts.
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from hermes_envs.errors import ConfigError, HermesEnvsError

__all__ = [
    "DEFAULT_MAX_RESULT_CHARS",
    "ToolBackendError",
    "ToolTimeoutError",
    "bound_result",
    "max_result_chars",
    "rpc_request_seconds",
    "run_with_timeout",
    "set_limits",
    "timeout_for",
]

DEFAULT_MAX_RESULT_CHARS = 50_000
#: Seconds a call of each family may take before it is abandoned with a ToolTimeoutError.
DEFAULT_TIMEOUTS: dict[str, float] = {
    "web": 60.0,
    "browser": 60.0,
    "vision": 120.0,
    "image_gen": 120.0,
    "code_execution": 300.0,
    "process": 200.0,
    "todo": 10.0,
    "memory": 10.0,
    "clarify": 120.0,
    "delegation": 900.0,
    "skills": 30.0,
    "moa": 300.0,
    "council": 300.0,
}
MARKER = "[... truncated by hermes-envs: {kept} of {total} characters kept ...]"

_overrides: dict[str, float] = {}
_max_chars: int | None = None
#: Seconds an execute_code script's connection may stay silent before its one-line request arrives (it arrives at
#: once: a silent client is dropped so no reply thread waits on it).
DEFAULT_RPC_REQUEST_SECONDS = 30.0
_rpc_request_seconds = DEFAULT_RPC_REQUEST_SECONDS


class ToolTimeoutError(HermesEnvsError, TimeoutError):
    """A tool call ran past its timeout; the agent loop turns it into a ToolError for that call."""


class ToolBackendError(HermesEnvsError, RuntimeError):
    """A tool's backend cannot run: a missing API key, a missing package, an unknown backend name."""


def set_limits(
    *,
    timeouts: dict[str, float] | None = None,
    max_result_chars: int | None = None,
    rpc_request_seconds: float | None = None,
) -> None:
    """Override per-family timeouts (seconds), the result size cap and how long an execute_code script's silent
    tool connection is kept (``rpc_request_seconds``, default 30) for calls made from now on."""
    global _max_chars, _rpc_request_seconds
    if rpc_request_seconds is not None:
        if (
            not isinstance(rpc_request_seconds, (int, float))
            or isinstance(rpc_request_seconds, bool)
            or rpc_request_seconds <= 0
        ):
            raise ConfigError(
                f"rpc_request_seconds should be a positive number of seconds; got {rpc_request_seconds!r}. "
                "Fix: pass e.g. set_limits(rpc_request_seconds=30)."
            )
        _rpc_request_seconds = float(rpc_request_seconds)
    for family, seconds in (timeouts or {}).items():
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
            raise ConfigError(
                f"timeout of tool family {family!r} should be a positive number of seconds; got {seconds!r}. "
                "Fix: pass e.g. set_limits(timeouts={'web': 30})."
            )
        _overrides[family] = float(seconds)
    if max_result_chars is not None:
        if not isinstance(max_result_chars, int) or max_result_chars < 500:
            raise ConfigError(
                f"max_result_chars should be an int >= 500; got {max_result_chars!r}. Fix: pass a larger cap."
            )
        _max_chars = max_result_chars


def _env_number(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(
            f"{name} should be a number; got {raw!r}. Fix: export {name}=60 (or unset it)."
        ) from None
    if value <= 0:
        raise ConfigError(f"{name} should be positive; got {raw!r}. Fix: export {name}=60 (or unset it).")
    return value


def rpc_request_seconds() -> float:
    """Seconds an execute_code script's tool connection may stay silent before it is dropped (set_limits())."""
    return _rpc_request_seconds


def timeout_for(family: str) -> float:
    """Seconds a call of ``family`` may take: set_limits() > HERMES_TOOL_TIMEOUT > the family default."""
    if family in _overrides:
        return _overrides[family]
    from_env = _env_number("HERMES_TOOL_TIMEOUT")
    return from_env if from_env is not None else DEFAULT_TIMEOUTS.get(family, 120.0)


def max_result_chars() -> int:
    """The largest tool result (characters of JSON) handed to the model."""
    if _max_chars is not None:
        return _max_chars
    from_env = _env_number("HERMES_TOOL_MAX_RESULT_CHARS")
    return int(from_env) if from_env is not None else DEFAULT_MAX_RESULT_CHARS


def _strings(value: Any, path: tuple = ()) -> list[tuple[tuple, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [hit for k, v in value.items() for hit in _strings(v, (*path, k))]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in _strings(v, (*path, i))]
    return []


def _set(value: Any, path: tuple, new: str) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def bound_result(result: Any, limit: int | None = None) -> str:
    """``result`` as JSON text of at most ``limit`` characters, still valid JSON.

    The longest strings are cut first, each ending with a marker saying how much was kept; a top-level dict gets
    ``"truncated": true``. A plain string result is cut with the same marker.
    """
    limit = limit or max_result_chars()
    if isinstance(result, str):
        if len(result) <= limit:
            return result
        try:
            result = json.loads(result)
        except ValueError:
            keep = max(limit - 120, 0)
            return result[:keep] + "\n" + MARKER.format(kept=keep, total=len(result))
    text = json.dumps(result, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return text
    data = json.loads(text)  # a private copy we may cut
    if isinstance(data, dict):
        data["truncated"] = True
    for _ in range(64):
        text = json.dumps(data, ensure_ascii=False)
        excess = len(text) - limit
        if excess <= 0:
            return text
        hits = sorted(_strings(data), key=lambda h: len(h[1]), reverse=True)
        if not hits or len(hits[0][1]) < 200:
            break
        path, longest = hits[0]
        keep = max(len(longest) - excess - 200, 0)
        _set(data, path, longest[:keep] + "\n" + MARKER.format(kept=keep, total=len(longest)))
    # Too many small pieces to cut one by one: keep a JSON summary of what was dropped.
    return json.dumps(
        {"truncated": True, "error": MARKER.format(kept=0, total=len(text)), "preview": text[: limit // 2]},
        ensure_ascii=False,
    )


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="hermes-tool-call")
        return _pool


def run_with_timeout(name: str, family: str, fn: Callable[[], Any], timeout: float | None = None) -> Any:
    """Run ``fn()`` and return its result, or raise ToolTimeoutError after ``timeout`` seconds.

    The call runs in a worker thread so a backend that blocks forever (a hung socket, a page that never loads) is
    abandoned; backends also get the timeout themselves and should stop on their own.
    """
    seconds = timeout if timeout is not None else timeout_for(family)
    future = _executor().submit(contextvars.copy_context().run, fn)  # current_tool() etc. carry over
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        future.cancel()
        raise ToolTimeoutError(
            f"tool {name!r} should finish within {seconds:g} s; it was still running and was abandoned. "
            f"Fix: retry with a smaller request, or raise the limit (set_limits(timeouts={{{family!r}: ...}}) or "
            "HERMES_TOOL_TIMEOUT)."
        ) from None
