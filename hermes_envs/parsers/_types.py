"""The names the parsers' signatures use for the shapes they pass around: decoded JSON, tool schemas, calls.

``JSONValue`` (``Any`` on purpose: decoded JSON is arbitrary by nature) and ``JSONObject`` come from
:mod:`hermes_envs._json_types`, shared with the agent loop.
"""

from __future__ import annotations

from typing import TypeAlias

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs._json_types import JSONObject, JSONValue

__all__ = ["JSONObject", "JSONValue", "ParsedPair", "ToolCallLike", "ToolSchema"]

#: One entry of a request's OpenAI ``tools`` list: ``{"type": "function", "function": {"name", "parameters"}}``.
ToolSchema: TypeAlias = dict[str, JSONValue]
#: A call ``render`` accepts: openai's object, an OpenAI-style dict, or a ``(name, arguments)`` pair.
ToolCallLike: TypeAlias = ChatCompletionMessageToolCall | dict[str, JSONValue] | tuple[str, JSONValue]
#: What the contract's ``parse(text)`` returns: ``(content, tool_calls)``.
ParsedPair: TypeAlias = tuple[str | None, list[ChatCompletionMessageToolCall] | None]
