"""The names the parsers' signatures use for the shapes they pass around: decoded JSON, tool schemas, calls.

``JSONValue`` is ``Any`` on purpose: a decoded JSON value (what ``json.loads`` returns, a call's arguments, a JSON
schema) is arbitrary by nature, and the readers narrow it with ``isinstance`` where they look inside. The alias
says where ``Any`` means "JSON" and nothing looser.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from openai.types.chat import ChatCompletionMessageToolCall

__all__ = ["JSONObject", "JSONValue", "ParsedPair", "ToolCallLike", "ToolSchema"]

#: A decoded JSON value: None, bool, int, float, str, a list of them or a dict of str to them.
JSONValue: TypeAlias = Any
#: A decoded JSON object (a call's arguments, a JSON schema).
JSONObject: TypeAlias = dict[str, JSONValue]
#: One entry of a request's OpenAI ``tools`` list: ``{"type": "function", "function": {"name", "parameters"}}``.
ToolSchema: TypeAlias = dict[str, JSONValue]
#: A call ``render`` accepts: openai's object, an OpenAI-style dict, or a ``(name, arguments)`` pair.
ToolCallLike: TypeAlias = ChatCompletionMessageToolCall | dict[str, JSONValue] | tuple[str, JSONValue]
#: What the contract's ``parse(text)`` returns: ``(content, tool_calls)``.
ParsedPair: TypeAlias = tuple[str | None, list[ChatCompletionMessageToolCall] | None]
