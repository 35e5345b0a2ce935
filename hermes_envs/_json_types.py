"""Names for decoded JSON in signatures: ``JSONValue`` (arbitrary by nature) and ``JSONObject``.

``JSONValue`` is ``Any`` on purpose: what ``json.loads`` returns, a tool call's arguments, a JSON schema or an OpenAI
chat message's fields can be any JSON value, and code narrows them with ``isinstance`` where it looks inside. The
alias says where ``Any`` means "JSON" and nothing looser (the parsers and the agent loop are type-checked strictly).
"""

from __future__ import annotations

from typing import Any, TypeAlias

__all__ = ["JSONObject", "JSONValue", "Message"]

#: A decoded JSON value: None, bool, int, float, str, a list of them or a dict of str to them.
JSONValue: TypeAlias = Any
#: A decoded JSON object (a call's arguments, a JSON schema, a request body).
JSONObject: TypeAlias = dict[str, JSONValue]
#: One OpenAI chat-format message (``{"role": ..., "content": ..., ...}``).
Message: TypeAlias = dict[str, JSONValue]
