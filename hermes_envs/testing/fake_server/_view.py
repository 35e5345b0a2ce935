"""RequestView: the parts of a request that turn selection, match conditions and policies look at."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_envs._chat import assistant_turns, tool_names
from hermes_envs._text import quoted

__all__ = ["RequestView", "short", "text_of", "tool_names"]


class RequestView:
    """The parts of a chat request that turn selection and match conditions look at.

    ``prompt_text`` is set for the text routes (completions, ``/generate``): the prompt then stands for both the
    first and the last user message.
    """

    __slots__ = ("body", "messages", "prompt_text")

    def __init__(self, body: Mapping[str, Any], prompt_text: str | None = None) -> None:
        self.body = body
        msgs = body.get("messages")
        self.messages: list[Any] = msgs if isinstance(msgs, list) else []
        self.prompt_text = prompt_text

    @property
    def assistant_count(self) -> int:
        return assistant_turns(self.messages)

    def _texts(self, role: str) -> list[str]:
        return [
            text_of(m.get("content"))
            for m in self.messages
            if isinstance(m, Mapping) and m.get("role") == role
        ]

    @property
    def first_user(self) -> str | None:
        if self.prompt_text is not None:
            return self.prompt_text
        users = self._texts("user")
        return users[0] if users else None

    @property
    def last_user(self) -> str | None:
        if self.prompt_text is not None:
            return self.prompt_text
        users = self._texts("user")
        return users[-1] if users else None

    @property
    def last_role(self) -> str | None:
        if not self.messages or not isinstance(self.messages[-1], Mapping):
            return None
        return self.messages[-1].get("role")

    @property
    def last_is_tool(self) -> bool:
        return self.last_role in ("tool", "function")

    @property
    def recent_tool_results(self) -> list[str]:
        out: list[str] = []
        for m in reversed(self.messages):
            if not isinstance(m, Mapping) or m.get("role") == "assistant":
                break
            if m.get("role") in ("tool", "function"):
                out.append(text_of(m.get("content")))
        return out[::-1]

    @property
    def tools_offered(self) -> list[str]:
        return tool_names(self.body.get("tools"))

    @property
    def temperature(self) -> float | None:
        t = self.body.get("temperature")
        return t if isinstance(t, (int, float)) and not isinstance(t, bool) else None

    @property
    def model(self) -> str | None:
        m = self.body.get("model")
        return m if isinstance(m, str) else None

    def summary(self, kind: str) -> str:
        """One line describing the request, for miss messages (``kind``: "chat" or "text")."""
        if kind != "chat":
            return f"prompt text ending {short((self.prompt_text or '')[-120:])}"
        return (
            f"{len(self.messages)} messages, last role {self.last_role!r}, last user message "
            f"{short(self.last_user, 80)}, tools offered {self.tools_offered!r}"
        )


def text_of(content: Any) -> str:
    """Text of a message ``content`` (a string, None, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def short(s: Any, n: int = 120) -> str:
    """``repr`` of ``str(s)`` cut to ``n`` characters, for messages (``None`` as ``None``)."""
    return "None" if s is None else quoted(str(s), n)
