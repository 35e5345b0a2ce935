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


def _validated_call(name: str, arguments: str, call_id: str) -> ChatCompletionMessageToolCall:
    # one validation of a plain dict is the fastest way in through pydantic (model_construct is slower)
    return ChatCompletionMessageToolCall.model_validate(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )


_FUNCTION = ChatCompletionMessageToolCall.model_fields["function"].annotation
_new = object.__new__
_set = object.__setattr__


def _built_call(name: str, arguments: str, call_id: str) -> ChatCompletionMessageToolCall:
    """The object validation would build from these strings, with the attributes pydantic stores set directly.

    Validation checked that three strings are strings and built two objects: a third of the cost of a reply
    made of many small calls. Used only while it gives an object equal to the validated one in every way (checked
    at import: see ``_same``); any non-string input goes through validation."""
    fn = _new(_FUNCTION)
    _set(fn, "__dict__", {"arguments": arguments, "name": name})
    _set(fn, "__pydantic_fields_set__", {"arguments", "name"})
    _set(fn, "__pydantic_extra__", {})
    _set(fn, "__pydantic_private__", None)
    call = _new(ChatCompletionMessageToolCall)
    _set(call, "__dict__", {"id": call_id, "function": fn, "type": "function"})
    _set(call, "__pydantic_fields_set__", {"id", "function", "type"})
    _set(call, "__pydantic_extra__", {})
    _set(call, "__pydantic_private__", None)
    return call


def _same(a: Any, b: Any) -> bool:
    """Are two tool-call objects the same in everything a user can see or pydantic keeps?"""
    pairs = ((a, b), (a.function, b.function))
    kept = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    return (
        a == b
        and repr(a) == repr(b)
        and a.model_dump_json() == b.model_dump_json()
        and all(type(x) is type(y) and list(x.__dict__) == list(y.__dict__) for x, y in pairs)  # field order
        and all(getattr(x, k) == getattr(y, k) for x, y in pairs for k in kept)
    )


try:  # (spaces and non-ASCII text: a model config that strips or normalises strings would show here)
    _SAMPLE = (" f ", '{"a": "é 1"}', "call_1")
    _DIRECT = isinstance(_FUNCTION, type) and _same(_built_call(*_SAMPLE), _validated_call(*_SAMPLE))
except Exception:  # a pydantic or openai release that stores its fields differently: validate every call
    _DIRECT = False


def make_tool_call(name: str, arguments: str, call_id: str | None = None) -> ChatCompletionMessageToolCall:
    """Build the OpenAI object for one call (``arguments`` already a JSON string)."""
    call_id = call_id or new_call_id()
    if _DIRECT and type(name) is str and type(arguments) is str and type(call_id) is str:
        return _built_call(name, arguments, call_id)
    return _validated_call(name, arguments, call_id)


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
