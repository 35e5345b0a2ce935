"""Rollouts that failed because the model server did (connection refused, 5xx ...), not because the model did.

Such a rollout says nothing about the policy: scoring it 0.0 would teach the trainer that the model answered badly.
The env base drops the whole group instead and says once which server failed, how, and what to do about it.

A ``process`` run (a fixed number of groups, written to a file) stops instead: before its first group it checks
that something accepts a connection at each server's address (atroposlib would otherwise retry every request of a
dead server with back-off for about 20 s first), and when every rollout of a group failed on the server it raises
:class:`ProcessStop` rather than letting atroposlib retry the group.
"""

from __future__ import annotations

import asyncio
import os
import urllib.request
from typing import Protocol
from urllib.parse import urlsplit

from hermes_envs.agent import AgentResult
from hermes_envs.errors import HermesEnvsError

__all__ = [
    "ProcessStop",
    "close_stopped_process",
    "dropped_group_message",
    "eval_failure_message",
    "failed_on_server",
    "server_urls",
    "unreachable_message",
]


def failed_on_server(result: AgentResult) -> bool:
    """True when the rollout ended because a model call raised (``termination == "api_error"``)."""
    return getattr(result, "termination", None) == "api_error"


def server_urls(server_manager: object) -> list[str]:
    """The distinct base URLs of an atroposlib ``ServerManager``'s servers (what ``--openai.base_url`` set)."""
    urls: list[str] = []
    for server in getattr(server_manager, "servers", None) or []:
        url = getattr(getattr(server, "config", None), "base_url", None)
        if url and str(url) not in urls:
            urls.append(str(url))
    return urls


_START = (
    "Fix: start the model server, or check --openai.base_url (and --openai.api_key / --openai.model_name)."
)
_LOGS = "Fix: check the model server's log (it is up but failing requests), or check --openai.base_url."


def _kind(error: str) -> tuple[str, str]:
    """What failed, in words, and the fix for it."""
    lowered = error.lower()
    if "connect" in lowered or "refused" in lowered:
        return "the server could not be reached (connection refused or no route)", _START
    if "timeout" in lowered or "timed out" in lowered:
        return "the server did not answer in time", _LOGS
    if "http 5" in lowered or "internalservererror" in lowered or "error code: 5" in lowered:
        return "the server answered with a 5xx error", _LOGS
    return "the model call raised", _START


def dropped_group_message(server_manager: object, errors: list[str], group_size: int) -> str:
    """One warning for a group dropped because ``len(errors)`` of its ``group_size`` rollouts hit server errors."""
    urls = ", ".join(server_urls(server_manager)) or "(no base_url configured)"
    first = errors[0] if errors else "unknown error"
    what, fix = _kind(first)
    return (
        f"the model server at {urls} should answer chat completions; got {len(errors)} of {group_size} rollouts "
        f"of this group failing on it: {what} ({first}). The group was dropped: failed rollouts are not scored "
        f"0.0 and the group is neither written nor sent. {fix}"
    )


def eval_failure_message(server_manager: object, failed: int, total: int, first: str) -> str:
    """The warning for an ``evaluate`` run in which ``failed`` of ``total`` rollouts hit server errors."""
    urls = ", ".join(server_urls(server_manager)) or "(no base_url configured)"
    what, fix = _kind(first)
    return (
        f"the model server at {urls} should answer every eval rollout; got {failed} of {total} failing on it: "
        f"{what} ({first}). evaluate() scored those items as if the model had answered (usually as wrong); "
        f"eval/api_errors counts them. {fix}"
    )


class ProcessStop(HermesEnvsError, RuntimeError):
    """A ``process`` run cannot go on because the model server fails; the env base turns it into exit status 1."""


async def _connect_error(url: str, timeout: float) -> str | None:
    """Why nothing accepts a TCP connection at ``url``'s host and port; None when something does or we can't tell.

    A plain connect, not an HTTP request: the server sees no call (a fake server's recorded calls stay as they
    were), and an address behind an HTTP proxy, or one that does not answer within ``timeout``, counts as "can't
    tell" (the run then goes on and atroposlib's own retries decide).
    """
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return None
    scheme = parts.scheme or "http"
    proxies = urllib.request.getproxies()
    if (proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(host):
        return None
    try:
        port = parts.port or (443 if scheme == "https" else 80)
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (asyncio.TimeoutError, ValueError):
        return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"
    writer.close()
    return None


async def unreachable_message(server_manager: object, timeout: float = 5.0) -> str | None:
    """The reason a ``process`` run cannot start when NO server of ``server_manager`` accepts a connection, else None.

    None as well when the manager has no URLs (nothing to check) or any one server might be reachable.
    """
    urls = server_urls(server_manager)
    if not urls:
        return None
    errors = await asyncio.gather(*(_connect_error(url, timeout) for url in urls))
    if any(error is None for error in errors):
        return None
    return (
        f"the model server at {', '.join(urls)} should answer chat completions; got no connection to it "
        f"({errors[0]}): nothing listens at that address, or there is no route to it. The run stopped before "
        f"its first rollout. {_START}"
    )


class _StoppedEnv(Protocol):
    """The env whose ``process`` run stopped: its ``config`` names the groups file (read defensively)."""

    config: object


def close_stopped_process(env: _StoppedEnv) -> None:
    """What atroposlib's ``process`` loop does at its end, for a run stopped early: close the groups file (the
    groups written so far are kept) and, when it holds any, render its viewer page."""
    writer = getattr(env, "jsonl_writer", None)
    if writer is not None:
        writer.close()
    path = getattr(env.config, "data_path_to_save_groups", None)
    if (
        getattr(env, "curr_step", 0) and path and os.path.exists(path)
    ):  # generate_html exits 1 on a missing file
        from atroposlib.frontend.jsonl2html import generate_html

        generate_html(path)
