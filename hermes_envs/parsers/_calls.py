"""Building the OpenAI tool-call objects a parse returns, and reading the calls ``render`` is given."""

from __future__ import annotations

import json
import os
import random
from typing import Any

from openai.types.chat import ChatCompletionMessageToolCall
from pydantic import BaseModel

from hermes_envs.parsers._errors import ParserError
from hermes_envs.parsers._json import arguments_to_json
from hermes_envs.parsers._types import JSONObject, JSONValue

__all__ = ["call_parts", "make_tool_call", "new_call_id", "random_bits"]


_IDS = (
    random.Random()
)  # seeded from os.urandom; ids need to be unique, not secret (and urandom per call is slow)
_ID_BATCH = 256
_ID_POOL: list[str] = []


def new_call_id() -> str:
    """A fresh OpenAI-style call id, ``call_`` + 24 hex digits."""
    try:
        return _ID_POOL.pop()  # (atomic: two threads never get the same id)
    except IndexError:
        pass
    # one draw of 96 bits per id, written out 256 at a time: a third of the cost of one draw and format per id,
    # which counted in a reply made of many small calls
    digits = f"{_IDS.getrandbits(96 * _ID_BATCH):0{24 * _ID_BATCH}x}"
    _ID_POOL.extend([f"call_{digits[i : i + 24]}" for i in range(24, 24 * _ID_BATCH, 24)])
    return f"call_{digits[:24]}"


def random_bits(k: int) -> int:
    """``k`` random bits from the generator call ids are drawn from (seeded from os.urandom, again after a fork):
    formats with their own id shape (Mistral's) draw from it too."""
    return _IDS.getrandbits(k)


def _after_fork() -> None:
    """A forked process draws its own ids (it would otherwise repeat its parent's pool and random sequence)."""
    _IDS.seed()
    _ID_POOL.clear()


os.register_at_fork(after_in_child=_after_fork)


def _validated_call(name: str, arguments: str, call_id: str) -> ChatCompletionMessageToolCall:
    # one validation of a plain dict is the fastest way in through pydantic (model_construct is slower)
    return ChatCompletionMessageToolCall.model_validate(
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    )


_FUNCTION: Any = ChatCompletionMessageToolCall.model_fields["function"].annotation
_new = object.__new__
# the slots pydantic keeps beside ``__dict__``, set through their descriptors (object.__setattr__ looks each up)
try:
    _set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
    _set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
    _set_private = BaseModel.__dict__["__pydantic_private__"].__set__
except (
    KeyError,
    AttributeError,
):  # a pydantic release without these slots: _same fails, every call validated
    _set_fields = _set_extra = _set_private = None


def _built_call(name: str, arguments: str, call_id: str) -> ChatCompletionMessageToolCall:
    """The object validation would build from these strings, with the attributes pydantic stores set directly.

    Validation checked that three strings are strings and built two objects: a third of the cost of a reply
    made of many small calls. Used only while it gives an object equal to the validated one in every way (checked
    at import: see ``_same``); any non-string input goes through validation."""
    fn = _new(_FUNCTION)
    fields = fn.__dict__  # (a fresh object's empty dict: filled in the order validation fills it)
    fields["arguments"] = arguments
    fields["name"] = name
    _set_fields(fn, {"arguments", "name"})
    _set_extra(fn, {})
    _set_private(fn, None)
    call = _new(ChatCompletionMessageToolCall)
    fields = call.__dict__
    fields["id"] = call_id
    fields["function"] = fn
    fields["type"] = "function"
    _set_fields(call, {"id", "function", "type"})
    _set_extra(call, {})
    _set_private(call, None)
    return call


def _same(a: ChatCompletionMessageToolCall, b: ChatCompletionMessageToolCall) -> bool:
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


def call_parts(call: object) -> tuple[str | None, str, JSONObject]:
    """Accept a ``ChatCompletionMessageToolCall``, an OpenAI-style dict or a ``(name, args)`` pair.

    Returns ``(id or None, name, args dict)``; raises :class:`ParserError` when the call cannot be rendered.
    """
    call_id: object = None
    if isinstance(call, tuple) and len(call) == 2:
        name, args = call
    elif isinstance(call, dict):
        fn: JSONValue = call.get("function") if isinstance(call.get("function"), dict) else call
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
