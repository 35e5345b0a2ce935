"""A scripted tool call (name, JSON arguments, optional id): the one piece of a turn that fault effects rewrite."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._script_errors import validated
from ._script_schema import ToolCallSpec

__all__ = ["ToolCall"]


@dataclass
class ToolCall:
    """One scripted tool call. ``arguments`` is kept as the JSON string sent on the wire."""

    name: str
    arguments: str = "{}"
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, str):
            self.arguments = json.dumps(self.arguments, ensure_ascii=False)

    @classmethod
    def from_obj(cls, obj: Any) -> ToolCall:
        """A ToolCall, or a mapping ``{name, arguments, id}`` validated like a script's tool call."""
        if isinstance(obj, ToolCall):
            return obj
        return cls.from_spec(validated(ToolCallSpec, obj, "<python>", ("tool_calls[]",), {}))

    @classmethod
    def from_spec(cls, spec: ToolCallSpec) -> ToolCall:
        """The ToolCall a validated ``tool_calls[]`` entry describes."""
        return cls(name=spec.name, arguments=spec.arguments, id=spec.id)
