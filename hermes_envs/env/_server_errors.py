"""Rollouts that failed because the model server did (connection refused, 5xx ...), not because the model did.

Such a rollout says nothing about the policy: scoring it 0.0 would teach the trainer that the model answered badly.
The env base drops the whole group instead and says once which server failed, how, and what to do about it.
"""

from __future__ import annotations

from typing import Any

from hermes_envs.agent import AgentResult


def failed_on_server(result: AgentResult) -> bool:
    """True when the rollout ended because a model call raised (``termination == "api_error"``)."""
    return getattr(result, "termination", None) == "api_error"


def server_urls(server_manager: Any) -> list[str]:
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


def dropped_group_message(server_manager: Any, errors: list[str], group_size: int) -> str:
    """One warning for a group dropped because ``len(errors)`` of its ``group_size`` rollouts hit server errors."""
    urls = ", ".join(server_urls(server_manager)) or "(no base_url configured)"
    first = errors[0] if errors else "unknown error"
    what, fix = _kind(first)
    return (
        f"the model server at {urls} should answer chat completions; got {len(errors)} of {group_size} rollouts "
        f"of this group failing on it: {what} ({first}). The group was dropped: failed rollouts are not scored "
        f"0.0 and the group is neither written nor sent. {fix}"
    )


def eval_failure_message(server_manager: Any, failed: int, total: int, first: str) -> str:
    """The warning for an ``evaluate`` run in which ``failed`` of ``total`` rollouts hit server errors."""
    urls = ", ".join(server_urls(server_manager)) or "(no base_url configured)"
    what, fix = _kind(first)
    return (
        f"the model server at {urls} should answer every eval rollout; got {failed} of {total} failing on it: "
        f"{what} ({first}). evaluate() scored those items as if the model had answered (usually as wrong); "
        f"eval/api_errors counts them. {fix}"
    )
