"""A rollout's messages as readable text for wandb's rollout tables (tool calls, results and reasoning shown)."""

from __future__ import annotations

from hermes_envs._json_types import JSONValue, Message
from hermes_envs._text import clip

__all__ = ["ARGUMENTS_CHARS", "REASONING_CHARS", "RESULT_CHARS", "format_trajectory"]

#: Characters kept of each part, so one huge tool result does not fill the table cell.
REASONING_CHARS = 300
ARGUMENTS_CHARS = 200
RESULT_CHARS = 500


def _text(content: JSONValue) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def format_trajectory(messages: list[Message]) -> str:
    """``[SYSTEM]`` / ``[USER]`` / ``[ASSISTANT]`` / ``[TOOL CALL] name(args)`` / ``[TOOL RESULT]`` blocks."""
    parts: list[str] = []
    for msg in messages:
        role = msg.get("role", "unknown")
        content = _text(msg.get("content"))
        if role in ("system", "user"):
            parts.append(f"[{role.upper()}]\n{content}")
        elif role == "assistant":
            reasoning = msg.get("reasoning_content")
            if reasoning:
                parts.append(f"[ASSISTANT thinking]\n{clip(str(reasoning), REASONING_CHARS)}")
            if content:
                parts.append(f"[ASSISTANT]\n{content}")
            for call in msg.get("tool_calls") or []:
                fn = call.get("function", {}) if isinstance(call, dict) else {}
                arguments = fn.get("arguments", "{}")
                arguments = arguments if isinstance(arguments, str) else str(arguments)
                parts.append(f"[TOOL CALL] {fn.get('name', '?')}({clip(arguments, ARGUMENTS_CHARS)})")
        elif role == "tool":
            parts.append(f"[TOOL RESULT] {clip(content, RESULT_CHARS)}")
        else:
            parts.append(f"[{str(role).upper()}]\n{content}")
    return "\n\n".join(parts)
