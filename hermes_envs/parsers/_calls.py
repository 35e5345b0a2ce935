"""Building the OpenAI tool-call objects a parse returns, and reading the calls ``render`` is given."""

from __future__ import annotations

import json
import random
from typing import Any

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers._errors import ParserError
from hermes_envs.parsers._json import arguments_to_json

__all__ = ["call_parts", "make_tool_call", "new_call_id"]


_IDS = (
    random.Random()
)  # seeded from os.urandom; ids need to be unique, not secret (and urandom per call is slow)


def new_call_id() -> str:
    """A fresh OpenAI-style call id, ``call_`` + 24 hex digits."""
    return f"call_{_IDS.getrandbits(96):024x}"


def make_tool_call(name: str, arguments: str, call_id: str | None = None) -> ChatCompletionMessageToolCall:
    """Build the OpenAI object for one call (``arguments`` already a JSON string)."""
    # one validation of a plain dict is the fastest way in (openai's model_construct is several times slower)
    return ChatCompletionMessageToolCall.model_validate(
        {
            "id": call_id or new_call_id(),
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
    )


def call_parts(call: Any) -> tuple[str | None, str, dict[str, Any]]:
    """Accept a ``ChatCompletionMessageToolCall``, an OpenAI-style dict or a ``(name, args)`` pair.

    Returns ``(id or None, name, args dict)``; raises :class:`ParserError` when the call cannot be rendered.
    """
    call_id: Any = None
    if isinstance(call, tuple) and len(call) == 2:
        name, args = call
    elif isinstance(call, dict):
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        call_id = call.get("id")
        name = fn.get("name")
        args = fn["arguments"] if "arguments" in fn else fn.get("parameters")
    else:
        fn = getattr(call, "function", call)
        call_id = getattr(call, "id", None)
        name = getattr(fn, "name", None)
        args = getattr(fn, "arguments", None)
    if not isinstance(name, str) or not name:
        raise ParserError(f"a tool call to render should have a non-empty string name; got {name!r}.")
    try:
        args = json.loads(arguments_to_json(args))
    except ValueError as exc:
        raise ParserError(f"tool call {name!r} to render should have JSON-object arguments; {exc}.") from None
    return (call_id if isinstance(call_id, str) and call_id else None), name, args
