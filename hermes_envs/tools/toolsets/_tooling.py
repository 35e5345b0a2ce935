"""Registering a family's tools: upstream's exact JSON schema, a timeout and a size cap around every handler."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..registry import Tool, ToolRegistry
from ._limits import bound_result, run_with_timeout
from .recording import calling_tool

__all__ = ["FamilyTool", "register_family", "schema"]

Impl = Callable[[dict[str, Any], str], Any]


def schema(properties: dict[str, dict] | None = None, required: list[str] | None = None) -> dict:
    """A JSON-schema ``object`` of ``properties`` (upstream writes ``required: []`` explicitly; so do we)."""
    return {"type": "object", "properties": properties or {}, "required": list(required or [])}


class FamilyTool:
    """The handler of one family tool: checks nothing itself (the registry checks argument names), runs ``impl``
    under the family's timeout and returns its result as bounded JSON text."""

    def __init__(self, name: str, family: str, impl: Impl, parameters: dict) -> None:
        self.name, self.family, self.impl, self.parameters = name, family, impl, parameters
        self.__qualname__ = f"FamilyTool[{name}]"
        self.__module__ = getattr(impl, "__module__", __name__)

    def __call__(self, task_id: str, **arguments: Any) -> str:
        props = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(props))
        missing = sorted(set(self.parameters.get("required", ())) - set(arguments))
        if unknown or missing:
            problems = [f"unexpected argument(s) {unknown}"] * bool(unknown) + [
                f"missing required argument(s) {missing}"
            ] * bool(missing)
            raise TypeError(
                f"tool {self.name!r} got {' and '.join(problems)}; its parameters are {sorted(props)} "
                f"(required: {sorted(self.parameters.get('required', ()))})."
            )
        with calling_tool(self.name):
            result = run_with_timeout(self.name, self.family, lambda: self.impl(arguments, task_id))
        if isinstance(result, str):
            try:
                json.loads(result)
            except ValueError:
                result = {"success": True, "output": result}
        return bound_result(result)


def register_family(
    target: ToolRegistry,
    toolset: str,
    family: str,
    tools: Sequence[tuple[str, str, dict, Impl]],
) -> None:
    """Register ``(name, description, parameters, impl)`` tools in ``toolset`` on ``target`` (skipping any already
    registered by this module, so importing twice is harmless)."""
    for name, description, parameters, impl in tools:
        if name in target and getattr(target.get(name).handler, "name", None) == name:
            continue
        target.register(
            Tool(
                name=name,
                toolset=toolset,
                description=description,
                parameters=parameters,
                handler=FamilyTool(name, family, impl, parameters),
                wants_task_id=True,
            )
        )
