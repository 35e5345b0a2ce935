"""What one agent rollout produced: :class:`AgentResult`, :class:`ToolError`, and helpers to read them.

The dataclasses follow the upstream contract field for field (authors' rewards read them); we only add fields with
defaults. Authors often look for ``result.final_response`` or ``result.tool_calls``: those do not exist, so the
helpers below compute them from ``messages`` instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from hermes_envs._json_types import JSONObject, JSONValue, Message

#: Why a rollout stopped. ``stop``: the model answered without tool calls; ``max_turns``: out of turns;
#: ``api_error``: the model server raised; ``empty_response``: a response with no choices; ``length``: the model
#: was cut off by ``max_tokens`` (finish_reason "length") on its last turn; ``tool_abort``: a tool raised
#: SystemExit or KeyboardInterrupt (the rollout stops, the group goes on); ``internal_error``: the loop itself
#: failed (``error`` holds the exception; a bug to report).
TerminationReason = Literal[
    "stop", "max_turns", "api_error", "empty_response", "length", "tool_abort", "internal_error"
]


@dataclass
class ToolError:
    """A tool call that failed during the loop (unknown tool, invalid JSON arguments, or a raising tool)."""

    turn: int
    tool_name: str
    arguments: str
    error: str
    tool_result: str

    def __post_init__(self) -> None:
        # Upstream keeps at most 200 characters of the arguments, so huge payloads don't bloat logs.
        if isinstance(self.arguments, str) and len(self.arguments) > 200:
            self.arguments = self.arguments[:200]


@dataclass
class AgentResult:
    """The transcript and bookkeeping of one rollout; ``messages`` is OpenAI chat format, tool calls are dicts."""

    messages: list[Message]
    managed_state: JSONObject | None = None
    turns_used: int = 0
    finished_naturally: bool = False
    reasoning_per_turn: list[str | None] = field(default_factory=list)
    tool_errors: list[ToolError] = field(default_factory=list)
    termination: TerminationReason = "stop"
    error: str | None = None


def final_response(result: AgentResult | list[Message]) -> str:
    """Return the content of the last assistant message that has content ("" when the model never said anything).

    Accepts an :class:`AgentResult` or its ``messages`` list. This is what upstream code means by "final response".
    """
    messages = result.messages if isinstance(result, AgentResult) else result
    for msg in reversed(messages):
        if msg.get("role") == "assistant":
            content = msg.get("content")
            if isinstance(content, str) and content.strip():
                return content
            if isinstance(content, list):  # content parts
                text = "".join(p.get("text", "") for p in content if isinstance(p, dict))
                if text.strip():
                    return text
    return ""


def tool_calls(result: AgentResult | list[Message]) -> list[JSONObject]:
    """Every tool call the model made, in order, as ``{"id", "name", "arguments"}`` with arguments decoded.

    Arguments that are not valid JSON are kept as the raw string, so a reward can still see what the model wrote.
    """
    messages = result.messages if isinstance(result, AgentResult) else result
    calls: list[JSONObject] = []
    for msg in messages:
        if msg.get("role") != "assistant":
            continue
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            raw = fn.get("arguments", "")
            try:
                args: JSONValue = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
            except json.JSONDecodeError:
                args = raw
            calls.append({"id": tc.get("id", ""), "name": fn.get("name", ""), "arguments": args})
    return calls


def tools_used(result: AgentResult | list[Message]) -> list[str]:
    """Names of the tools the model called, without repeats, in first-use order."""
    seen: dict[str, None] = {}
    for call in tool_calls(result):
        seen.setdefault(call["name"], None)
    return list(seen)


def tool_results(result: AgentResult | list[Message]) -> list[str]:
    """The contents of every ``tool`` role message, in order."""
    messages = result.messages if isinstance(result, AgentResult) else result
    return [str(m.get("content", "")) for m in messages if m.get("role") == "tool"]
