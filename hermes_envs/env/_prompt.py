"""Calling an env's ``format_prompt`` the one way the framework and the kit both do.

``async def format_prompt`` (or a sync one returning an async helper's result) is a common mistake: the coroutine it
returns is closed at once, so the author gets one clear error or finding instead of a "coroutine was never awaited"
warning later, printed from wherever the garbage collector happened to be.
"""

from __future__ import annotations

import inspect
from typing import Protocol

from hermes_envs._json_types import JSONValue, Message
from hermes_envs.env._types import Item
from hermes_envs.errors import ArgumentTypeError

__all__ = ["coroutine_name", "format_prompt_of", "initial_messages_of", "prompt_content"]


def coroutine_name(value: object) -> str:
    """The function a coroutine came from (``AsyncPromptEnv.format_prompt``)."""
    return getattr(value, "__qualname__", None) or type(value).__name__


class PromptEnv(Protocol):
    """An env that writes a prompt for an item (every upstream-layout env): ``format_prompt(item)``."""

    def format_prompt(self, item: Item) -> object: ...


# JSONValue: the prompt is a message's content (text or content parts); a coroutine, from a format_prompt wrongly
# written async, comes back closed and the callers report it by type
def format_prompt_of(env: PromptEnv, item: Item) -> JSONValue:
    """``env.format_prompt(item)``, with a returned coroutine closed (never run): callers report it by type."""
    prompt = env.format_prompt(item)
    if inspect.iscoroutine(prompt):
        prompt.close()
    return prompt


def prompt_content(env: PromptEnv, item: Item) -> JSONValue:
    """The user message content for ``item``; a coroutine is refused with the fix (format_prompt must be sync)."""
    prompt = format_prompt_of(env, item)
    if inspect.iscoroutine(prompt):
        raise ArgumentTypeError(
            f"{type(env).__name__}.format_prompt(item) should return the prompt text; got a coroutine of "
            f"{coroutine_name(prompt)}(). Fix: make format_prompt a plain `def` and build the text without await "
            "(load what it needs in setup())."
        )
    return prompt


def initial_messages_of(env: PromptEnv, item: Item) -> list[Message]:
    """The messages a rollout of ``item`` starts from: the env's ``initial_messages(item)`` when it has one (every
    HermesAgentBaseEnv), else the config's system prompt (if any) and ``format_prompt(item)`` as the user turn."""
    build = getattr(env, "initial_messages", None)
    if build is not None:
        messages_of_item: list[Message] = build(item)
        return messages_of_item
    messages = []
    system = getattr(getattr(env, "config", None), "system_prompt", None)
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": format_prompt_of(env, item)})
    return messages
