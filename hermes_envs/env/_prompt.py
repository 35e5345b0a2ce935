"""Calling an env's ``format_prompt`` the one way the framework and the kit both do.

``async def format_prompt`` (or a sync one returning an async helper's result) is a common mistake: the coroutine it
returns is closed at once, so the author gets one clear error or finding instead of a "coroutine was never awaited"
warning later, printed from wherever the garbage collector happened to be.
"""

from __future__ import annotations

import inspect
from typing import Any

from hermes_envs.errors import ArgumentTypeError

__all__ = ["coroutine_name", "format_prompt_of", "initial_messages_of", "prompt_content"]


def coroutine_name(value: Any) -> str:
    """The function a coroutine came from (``AsyncPromptEnv.format_prompt``)."""
    return getattr(value, "__qualname__", None) or type(value).__name__


def format_prompt_of(env: Any, item: Any) -> Any:
    """``env.format_prompt(item)``, with a returned coroutine closed (never run): callers report it by type."""
    prompt = env.format_prompt(item)
    if inspect.iscoroutine(prompt):
        prompt.close()
    return prompt


def prompt_content(env: Any, item: Any) -> Any:
    """The user message content for ``item``; a coroutine is refused with the fix (format_prompt must be sync)."""
    prompt = format_prompt_of(env, item)
    if inspect.iscoroutine(prompt):
        raise ArgumentTypeError(
            f"{type(env).__name__}.format_prompt(item) should return the prompt text; got a coroutine of "
            f"{coroutine_name(prompt)}(). Fix: make format_prompt a plain `def` and build the text without await "
            "(load what it needs in setup())."
        )
    return prompt


def initial_messages_of(env: Any, item: Any) -> list[dict[str, Any]]:
    """The messages a rollout of ``item`` starts from: the env's ``initial_messages(item)`` when it has one (every
    HermesAgentBaseEnv), else the config's system prompt (if any) and ``format_prompt(item)`` as the user turn."""
    build = getattr(env, "initial_messages", None)
    if build is not None:
        return build(item)
    messages = []
    system = getattr(getattr(env, "config", None), "system_prompt", None)
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": format_prompt_of(env, item)})
    return messages
