"""Reading one chat-completions response: its reasoning text, its tool calls as plain dicts, a failed call's error.

Responses come as openai objects or dicts (and providers put reasoning under three names); the agent loop asks
these helpers rather than knowing the shapes.
"""

from __future__ import annotations

import json
import uuid

from hermes_envs._json_types import JSONObject


def _extract_reasoning(message: object) -> str | None:
    """Reasoning text of a response message: ``reasoning_content``, else ``reasoning``, else ``reasoning_details``."""
    for attr in ("reasoning_content", "reasoning"):
        value = _field(message, attr)
        if isinstance(value, str) and value:
            return value
    details = _field(message, "reasoning_details")
    if isinstance(details, list) and details:
        parts = []
        for entry in details:
            text = entry.get("text") if isinstance(entry, dict) else getattr(entry, "text", None)
            if isinstance(text, str) and text:
                parts.append(text)
        if parts:
            return "\n".join(parts)
    return None


def _field(obj: object, name: str) -> object:
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


def _tool_call_dict(tc: object) -> JSONObject:
    """An OpenAI tool call (object or dict) as the plain dict that goes into ``messages``."""
    fn = _field(tc, "function") or {}
    name = _field(fn, "name") or ""
    arguments = _field(fn, "arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = _field(tc, "id") or f"call_{uuid.uuid4().hex[:24]}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def describe_api_error(exc: BaseException) -> str:
    """``Type: message`` of a failed model call, looking through atroposlib's tenacity ``RetryError`` wrappers
    (whose own text is only ``RetryError[<Future ...>]``) to the last real error, with the HTTP status and body
    of an openai ``APIStatusError`` (e.g. the fake server's 409 naming the unmatched request)."""
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        attempt = getattr(exc, "last_attempt", None)  # tenacity.RetryError
        inner = attempt.exception() if attempt is not None and hasattr(attempt, "exception") else None
        if not isinstance(inner, BaseException):
            break
        exc = inner
    text = f"{type(exc).__name__}: {exc}"
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    if status is not None and response is not None:
        try:
            body = response.text
        except Exception:  # a streamed or closed response: the message above is all there is
            body = ""
        if body and body[:200] not in text:
            text += f" (HTTP {status}: {body[:2000]})"
    return text
