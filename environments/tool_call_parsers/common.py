"""Upstream path ``environments.tool_call_parsers.common``: the helpers upstream's parsers share, on ours.

Upstream code that builds its own parser from these (argument normalisation, call construction, tag extraction)
gets the same answers: ``make_tool_call(name=..., arguments=...)`` returns an openai ``ChatCompletionMessageToolCall``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from openai.types.chat import ChatCompletionMessageToolCall

from hermes_envs.parsers.base import make_tool_call as _make_tool_call
from hermes_envs.parsers.mistral import mistral_call_id

__all__ = [
    "extract_tagged_payloads",
    "make_mistral_id",
    "make_tool_call",
    "make_uuid_id",
    "normalize_arguments",
    "split_content_from_first_marker",
]


def normalize_arguments(args: Any) -> str:
    """A call's arguments as the JSON string of ``function.arguments``: a str is kept, anything else JSON-encoded."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def make_uuid_id(prefix: str = "call_") -> str:
    """A fresh call id: ``prefix`` and 8 random hex digits, as upstream's (the parsers' own ids have 24)."""
    return prefix + uuid.uuid4().hex[:8]


def make_mistral_id() -> str:
    """A fresh Mistral-style id: 9 letters/digits (Mistral's templates reject any other shape)."""
    return mistral_call_id()


def make_tool_call(*, name: str, arguments: Any, call_id: str | None = None) -> ChatCompletionMessageToolCall:
    """The openai tool-call object for ``name`` and ``arguments`` (normalised as :func:`normalize_arguments`)."""
    return _make_tool_call(name, normalize_arguments(arguments), call_id)


def extract_tagged_payloads(text: str, open_tag: str, close_tag: str) -> list[str]:
    """Every non-blank ``open_tag ... close_tag`` body (whitespace-trimmed), and a last unclosed one's rest.

    One forward pass with ``str.find`` (upstream uses a lazy regex; the answers are the same).
    """
    payloads: list[str] = []
    pos = 0
    while True:
        start = text.find(open_tag, pos)
        if start == -1:
            return payloads
        body = start + len(open_tag)
        end = text.find(close_tag, body)
        if end == -1:
            raw = text[body:].lstrip()
            if raw.strip():
                payloads.append(raw)
            return payloads
        raw = text[body:end].strip()
        if raw:
            payloads.append(raw)
        pos = end + len(close_tag)


def split_content_from_first_marker(text: str, marker: str) -> tuple[str | None, bool]:
    """The text before ``marker`` stripped (None when empty), and whether the marker was found."""
    at = text.find(marker)
    if at < 0:
        return text.strip() or None, False
    return text[:at].strip() or None, True
