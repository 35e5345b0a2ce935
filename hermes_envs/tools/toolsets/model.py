"""The model server that tools needing a model (vision, image generation, delegation, mixture of agents, clarify)
call: the server of the env whose rollout is running (part of the env's ``EnvRuntime``, bound where the framework
drives the env: see :mod:`hermes_envs.tools._runtime`), else one bound process-wide, else ``HERMES_TOOLS_MODEL_BASE_URL``.

The env's endpoint lives in a ``ContextVar``, not a global: two envs in one process (a train env next to an eval
env, the conformance kit's several envs) each send their tools' model calls to their own server, even when their
rollouts run concurrently on one event loop. Tool threads see it because the tool pools copy the context.

Under tests the env's server is the fake model server, so these tools are answered by its script or policy like
any other request. Calls are plain synchronous OpenAI-compatible HTTP (tools run in worker threads, never on the
event loop), so an HTTP cassette records them with the rest of the model traffic.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hermes_envs.errors import ConfigError

from ._limits import ToolBackendError

__all__ = [
    "ModelEndpoint",
    "bind_env_server",
    "bind_model_endpoint",
    "chat",
    "endpoint_of_server",
    "model_endpoint",
    "using_env_server",
    "using_model_endpoint",
]


@dataclass(frozen=True)
class ModelEndpoint:
    """An OpenAI-compatible chat endpoint: ``base_url`` (ending in /v1), ``api_key`` and ``model``."""

    base_url: str
    api_key: str = "x"
    model: str = "default"


_bound: ModelEndpoint | None = None
# The endpoint of the env whose rollout / evaluate call is running in this context (see the module docstring).
_env_endpoint: contextvars.ContextVar[ModelEndpoint | None] = contextvars.ContextVar(
    "hermes_env_model_endpoint", default=None
)


def bind_model_endpoint(endpoint: ModelEndpoint | None) -> None:
    """Send the tools' model calls to ``endpoint`` process-wide, outside any env's rollout (None: unbind)."""
    global _bound
    if endpoint is not None and not isinstance(endpoint, ModelEndpoint):
        raise ConfigError(f"bind_model_endpoint() should get a ModelEndpoint; got {type(endpoint).__name__}.")
    _bound = endpoint


def endpoint_of_server(server: Any) -> ModelEndpoint | None:
    """The endpoint of the first server of an atroposlib ``ServerManager`` that has a base URL (None: none has)."""
    for candidate in getattr(server, "servers", None) or []:
        config = getattr(candidate, "config", None)
        base_url = getattr(config, "base_url", None)
        if base_url:
            return ModelEndpoint(
                base_url=str(base_url).rstrip("/"),
                api_key=str(getattr(config, "api_key", None) or "x"),
                model=str(getattr(config, "model_name", None) or "default"),
            )
    return None


@contextlib.contextmanager
def using_model_endpoint(endpoint: ModelEndpoint | None) -> Iterator[None]:
    """Within the block (and tasks / tool threads started from it) tools ask ``endpoint``; None changes nothing."""
    if endpoint is None:
        yield
        return
    token = _env_endpoint.set(endpoint)
    try:
        yield
    finally:
        _env_endpoint.reset(token)


def using_env_server(server: Any) -> contextlib.AbstractContextManager[None]:
    """:func:`using_model_endpoint` with the endpoint of an env's ``ServerManager``."""
    return using_model_endpoint(endpoint_of_server(server))


def bind_env_server(server: Any) -> bool:
    """Bind an env's server process-wide (:func:`bind_model_endpoint`); False when it has no URL.

    The env base does not call this (the last env built would win for every env); it binds its ``EnvRuntime``
    where it drives the env instead. Kept for scripts that run tools outside any env.
    """
    endpoint = endpoint_of_server(server)
    if endpoint is None:
        return False
    bind_model_endpoint(endpoint)
    return True


def model_endpoint(tool: str) -> ModelEndpoint:
    """Where ``tool`` sends its model calls: the running env's server, else the process-wide bound endpoint, else
    ``HERMES_TOOLS_MODEL_BASE_URL`` (+ ``_API_KEY``, ``_MODEL``)."""
    current = _env_endpoint.get()
    if current is not None:
        return current
    if _bound is not None:
        return _bound
    base = os.environ.get("HERMES_TOOLS_MODEL_BASE_URL", "").strip()
    if not base:
        raise ToolBackendError(
            f"{tool} should have a model server to ask; got none bound and no HERMES_TOOLS_MODEL_BASE_URL. Fix: run "
            "it inside a HermesAgentBaseEnv (its server is used), or export HERMES_TOOLS_MODEL_BASE_URL="
            "http://127.0.0.1:PORT/v1 (e.g. a `hermes-envs fake-server`)."
        )
    return ModelEndpoint(
        base_url=base.rstrip("/"),
        api_key=os.environ.get("HERMES_TOOLS_MODEL_API_KEY", "x"),
        model=os.environ.get("HERMES_TOOLS_MODEL_MODEL", "default"),
    )


def chat(
    tool: str,
    messages: list[dict[str, Any]],
    *,
    timeout: float,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    tools: list[dict] | None = None,
) -> dict[str, Any]:
    """One chat completion for ``tool``; returns the assistant message (``content``, maybe ``tool_calls``)."""
    import httpx

    endpoint = model_endpoint(tool)
    body: dict[str, Any] = {"model": endpoint.model, "messages": messages, "temperature": temperature, "n": 1}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if tools:
        body["tools"] = tools
    url = endpoint.base_url + "/chat/completions"
    try:
        response = httpx.post(
            url, json=body, headers={"Authorization": f"Bearer {endpoint.api_key}"}, timeout=timeout
        )
    except httpx.HTTPError as exc:
        raise ToolBackendError(
            f"{tool} should reach its model server at {url}; got {type(exc).__name__}: {exc}. Fix: check the server "
            "is running."
        ) from None
    if response.status_code >= 400:
        raise ToolBackendError(
            f"{tool}'s model server at {url} should answer 2xx; got HTTP {response.status_code}: "
            f"{response.text[:300]}."
        )
    choices = response.json().get("choices") or []
    if not choices:
        raise ToolBackendError(f"{tool}'s model server at {url} should return a choice; got none.")
    return choices[0].get("message") or {}
