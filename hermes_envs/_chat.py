"""Reading OpenAI chat-format messages and request bodies: the counts and names several layers ask for.

The agent loop, the fake server, cassettes, recording and the conformance checks all need "how many assistant turns
so far" and "which tools did this request offer"; one tolerant reading here (non-dict entries are skipped, both the
wrapped ``{"type": "function", "function": {...}}`` and the flat tool shape are read) keeps their answers equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["assistant_turns", "offered_functions", "offered_tool_names", "tool_names"]


def assistant_turns(messages: Iterable[Any] | None) -> int:
    """How many assistant messages ``messages`` holds (entries that are not mappings are skipped)."""
    return sum(1 for m in messages or () if isinstance(m, Mapping) and m.get("role") == "assistant")


def offered_functions(tools: Iterable[Any] | None) -> list[Mapping[str, Any]]:
    """The function definitions of an OpenAI ``tools`` list (wrapped or flat), in order."""
    out: list[Mapping[str, Any]] = []
    for t in tools or ():
        if isinstance(t, Mapping):
            fn = t.get("function")
            out.append(fn if isinstance(fn, Mapping) else t)
    return out


def tool_names(tools: Iterable[Any] | None) -> list[str]:
    """Names of the tools in an OpenAI ``tools`` list (entries without a string name are skipped)."""
    return [fn["name"] for fn in offered_functions(tools) if isinstance(fn.get("name"), str)]


def offered_tool_names(body: Mapping[str, Any] | None) -> list[str]:
    """Names of the tools a chat-completions request body offers (``[]`` when it offers none)."""
    return tool_names((body or {}).get("tools"))
