"""The tool registry: tools grouped in toolsets, JSON schemas derived from typed functions, dispatch by name.

```python
from hermes_envs.tools import tool

@tool(toolset="math")
def add(a: int, b: int = 0) -> int:
    \"\"\"Add two integers.

    Args:
        a: The first number.
        b: The second number.
    \"\"\"
    return a + b
```
A handler parameter named ``task_id`` is not part of the schema; :meth:`ToolRegistry.dispatch` fills it with the
rollout's task id, so the handler can reach that task's sandbox (:func:`~hermes_envs.tools.sandbox.get_sandbox`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
import re
import threading
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from hermes_envs._definitions import same_definition, same_file, where
from hermes_envs._registry import Registry
from hermes_envs.errors import ToolRegistryError, UnknownNameError, UsageError
from hermes_envs.tools.schema import TASK_ID, schema_from_function, signature_of

__all__ = [
    "Tool",
    "ToolRegistry",
    "call_abandoned",
    "offered_tools",
    "offering",
    "registry",
    "schema_from_function",
    "tool",
]

#: The tool names the agent making the current call was offered (None: the call comes from outside an agent loop),
#: and the event the loop sets when it gives the call up (its tool timeout).
_OFFERED: contextvars.ContextVar[tuple[frozenset[str], threading.Event | None] | None] = (
    contextvars.ContextVar("hermes_offered_tools", default=None)
)


@contextlib.contextmanager
def offering(names: Iterable[str], abandoned: threading.Event | None = None) -> Iterator[None]:
    """Within the block (and the tool threads started from it) :func:`offered_tools` is ``names``: the agent loop
    says which tools its agent has, so a tool that hands tools on (``delegate_task``) never hands on more; and
    :func:`call_abandoned` is ``abandoned``, set when the loop stops waiting for the call."""
    token = _OFFERED.set((frozenset(names), abandoned))
    try:
        yield
    finally:
        _OFFERED.reset(token)


def offered_tools() -> frozenset[str] | None:
    """The tools of the agent whose call runs now (see :func:`offering`); None outside an agent loop."""
    current = _OFFERED.get()
    return current[0] if current is not None else None


def call_abandoned() -> threading.Event | None:
    """Set once the agent loop has given up the call running now (None outside an agent loop): a tool that goes
    on working in the background (sub-agents) stops when it is set."""
    current = _OFFERED.get()
    return current[1] if current is not None else None


_F = typing.TypeVar("_F", bound=Callable[..., Any])


@dataclass
class Tool:
    """A callable the model can use: its name, toolset, description, JSON-schema parameters and handler."""

    name: str
    toolset: str
    description: str
    parameters: dict
    handler: Callable[..., Any]
    wants_task_id: bool | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.name):
            raise ToolRegistryError(
                f"tool name should be 1-64 letters, digits, '_', '.' or '-' (the OpenAI function-name rule); "
                f"got {self.name!r}."
            )
        if not callable(self.handler):
            raise ToolRegistryError(
                f"tool {self.name!r} should have a callable handler; got {self.handler!r}."
            )
        if not isinstance(self.parameters, dict) or self.parameters.get("type", "object") != "object":
            raise ToolRegistryError(
                f"tool {self.name!r} parameters should be a JSON schema of type 'object'; got {self.parameters!r}."
            )
        if self.wants_task_id is None:
            self.wants_task_id = _accepts(self.handler, TASK_ID)
        self._open_kwargs = _accepts_var_keyword(self.handler)

    def schema(self) -> dict:
        """The OpenAI ``tools`` entry: ``{"type": "function", "function": {name, description, parameters}}``."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def call(self, arguments: dict, task_id: str) -> Any:
        """Call the handler with ``arguments`` (and ``task_id`` when it takes one); returns what it returns."""
        if not isinstance(arguments, dict):
            raise TypeError(
                f"tool {self.name!r} arguments should be a JSON object; got {type(arguments).__name__}: "
                f"{arguments!r:.200}."
            )
        self._check_arguments(arguments)
        kwargs = dict(arguments)
        if self.wants_task_id:
            kwargs[TASK_ID] = task_id
        return self.handler(**kwargs)

    def _check_arguments(self, arguments: dict) -> None:
        props = self.parameters.get("properties")
        if props is None or self.parameters.get("additionalProperties", False) is not False:
            return
        if self._open_kwargs:
            return
        unknown = sorted(set(arguments) - set(props))
        missing = sorted(set(self.parameters.get("required", ())) - set(arguments))
        problems = []
        if unknown:
            problems.append(f"unexpected argument(s) {unknown}")
        if missing:
            problems.append(f"missing required argument(s) {missing}")
        if problems:
            raise TypeError(
                f"tool {self.name!r} got {' and '.join(problems)}; its parameters are {sorted(props)} "
                f"(required: {sorted(self.parameters.get('required', ()))})."
            )


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    sig = signature_of(fn)
    return sig is not None and name in sig.parameters


def _accepts_var_keyword(fn: Callable[..., Any]) -> bool:
    sig = signature_of(fn)
    return sig is not None and any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


# ---------------------------------------------------------------------------------------------- registry
class ToolRegistry:
    """Named tools grouped in toolsets. Thread-safe; registration order is kept.

    The names live in a :class:`~hermes_envs._registry.Registry`, so the duplicate-name rule is the package's one
    rule: the same handler definition registered again (the env module imported a second time) replaces itself.
    """

    def __init__(self) -> None:
        self._entries: Registry[Tool] = Registry("tool", error=ToolRegistryError)
        self._extra: dict[str, list[str]] = {}  # toolset -> more tool names (upstream's composite toolsets)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"<ToolRegistry {len(self._entries)} tools in toolsets {sorted(self.toolsets())}>"

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @contextlib.contextmanager
    def isolated(self) -> Iterator[Registry[Tool]]:
        """Within the block, tools registered or removed and toolsets defined are restored on exit (for tests)."""
        with self._lock:
            extra = {name: list(tools) for name, tools in self._extra.items()}
        try:
            with self._entries.isolated() as entries:
                yield entries
        finally:
            with self._lock:
                self._extra = extra

    def register(self, tool: Tool) -> Tool:
        """Add ``tool``; a second tool with the same name raises ToolRegistryError naming both.

        A handler that is the same definition as the registered one (same source file and ``__qualname__``: the
        module was imported again, e.g. under a second module name by ``pytest --hermes-conformance``) replaces
        it silently instead.
        """
        if not isinstance(tool, Tool):
            raise ToolRegistryError(
                f"register() should get a Tool; got {type(tool).__name__}. Fix: register(Tool(...)) or use @tool."
            )
        existing = self._entries.find(tool.name)
        if existing is not None:
            if same_definition(existing.handler, tool.handler):
                return self._entries.replace(tool.name, tool)  # imported again: keeps its place
            fix = (
                "register only one of them under that name (tool(name=...)) in that file."
                if same_file(existing.handler, tool.handler)
                else "rename one of them (tool(name=...)), or unregister the first."
            )
            raise ToolRegistryError(
                f"tool name {tool.name!r} should be unique; it is registered by {where(existing.handler)} "
                f"(toolset {existing.toolset!r}) and again by {where(tool.handler)} (toolset {tool.toolset!r}). "
                f"Fix: {fix}"
            )
        return self._entries.register(tool.name, tool)

    def unregister(self, name: str) -> Tool:
        """Remove and return tool ``name``; an unknown name raises KeyError listing the registered tools."""
        if name not in self._entries:
            raise UnknownNameError(self._unknown(name))
        return self._entries.unregister(name)

    @typing.overload
    def tool(
        self, fn: _F, /, *, name: str | None = None, toolset: str = "custom", description: str | None = None
    ) -> _F: ...

    @typing.overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        toolset: str = "custom",
        description: str | None = None,
    ) -> Callable[[_F], _F]: ...

    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        toolset: str = "custom",
        description: str | None = None,
    ) -> Any:
        """Decorator registering a function as a tool; usable bare (``@reg.tool``) or with options.

        The JSON schema comes from the type hints and defaults (no default = required), the description from
        the docstring's first paragraph and the parameter descriptions from its ``Args:`` section. The function
        is returned unchanged.
        """

        def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or func.__name__
            derived, parameters = schema_from_function(func, name=tool_name)
            self.register(
                Tool(
                    name=tool_name,
                    toolset=toolset,
                    description=description or derived,
                    parameters=parameters,
                    handler=func,
                )
            )
            return func

        return decorate(fn) if fn is not None else decorate

    def get(self, name: str) -> Tool:
        """The tool registered as ``name``; an unknown name raises KeyError listing the registered tools."""
        tool = self._entries.find(name)
        if tool is None:
            raise UnknownNameError(self._unknown(name))
        return tool

    def names(self) -> list[str]:
        """Tool names in registration order."""
        return [name for name, _ in self._entries.items()]

    def define_toolset(self, name: str, tools: list[str]) -> None:
        """Make toolset ``name`` also offer ``tools`` (tools registered in other toolsets), as upstream's toolsets
        list tools of other families (``search`` is web_search alone; ``browser`` includes web_search)."""
        with self._lock:
            extra = self._extra.setdefault(name, [])
            extra.extend(t for t in tools if t not in extra)

    def toolsets(self) -> dict[str, list[str]]:
        """``{toolset: [tool names]}`` in registration order (tools of other toolsets a toolset includes last)."""
        out: dict[str, list[str]] = {}
        for t in self._entries.values():
            out.setdefault(t.toolset, []).append(t.name)
        for toolset, names in list(self._extra.items()):
            present = [n for n in names if n in self._entries and n not in out.get(toolset, [])]
            if present:
                out.setdefault(toolset, []).extend(present)
        return out

    def resolve(
        self, enabled_toolsets: list[str] | None = None, disabled_toolsets: list[str] | None = None
    ) -> tuple[list[dict], set[str]]:
        """(schemas, valid tool names) for the enabled toolsets (None = all) minus the disabled ones."""
        available = self.toolsets()
        for label, given in (
            ("enabled_toolsets", enabled_toolsets),
            ("disabled_toolsets", disabled_toolsets),
        ):
            if given is None:
                continue
            if isinstance(given, str):
                raise ToolRegistryError(
                    f"{label} should be a list of toolset names; got the string {given!r}. Fix: [{given!r}]."
                )
            unknown = [ts for ts in given if ts not in available]
            if unknown:
                raise ToolRegistryError(
                    f"{label} should name registered toolsets; got unknown {unknown}. "
                    f"Available toolsets: {sorted(available)}."
                )
        chosen = set(available) if enabled_toolsets is None else set(enabled_toolsets)
        offered = {n for ts in chosen for n in available[ts]}
        offered -= {n for ts in disabled_toolsets or () for n in available[ts]}
        tools = [t for t in self._entries.values() if t.name in offered]
        return [t.schema() for t in tools], {t.name for t in tools}

    def dispatch(self, name: str, arguments: dict, task_id: str) -> str:
        """Call tool ``name`` for ``task_id``; a str result is returned as is, anything else as JSON.

        Exceptions raised by the tool propagate; an unknown name raises KeyError listing the known ones.
        """
        result = self.get(name).call(arguments, task_id)
        if inspect.isawaitable(result):
            result = _run_coroutine(result, name)
        return _to_text(result)

    async def adispatch(self, name: str, arguments: dict, task_id: str) -> str:
        """Awaitable :meth:`dispatch`: sync handlers run in the sandbox thread pool, async ones on the loop."""
        from .sandbox import run_off_loop

        t = self.get(name)
        handler = t.handler
        if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            vars(type(handler)).get("__call__")
        ):
            return _to_text(await t.call(arguments, task_id))
        return await run_off_loop(self.dispatch, name, arguments, task_id)

    def _unknown(self, name: str) -> str:
        return (
            f"unknown tool {name!r}; registered tools: {self._entries.names()}. "
            "Fix: register it (@tool) or check the spelling."
        )


def _to_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)


def _run_coroutine(awaitable: Any, name: str) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    raise UsageError(
        f"tool {name!r} is async and should be awaited inside a running event loop; got a synchronous dispatch. "
        "Fix: use `await registry.adispatch(...)` (or dispatch from a worker thread)."
    )


async def _await(awaitable: Any) -> Any:
    return await awaitable


registry = ToolRegistry()
"""The default registry: the built-in toolsets are registered on it when ``hermes_envs.tools`` is imported."""


@typing.overload
def tool(
    fn: _F, /, *, name: str | None = None, toolset: str = "custom", description: str | None = None
) -> _F: ...


@typing.overload
def tool(
    fn: None = None, /, *, name: str | None = None, toolset: str = "custom", description: str | None = None
) -> Callable[[_F], _F]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    toolset: str = "custom",
    description: str | None = None,
) -> Any:
    """Register a function on the default :data:`registry` (see :meth:`ToolRegistry.tool`); returns it unchanged,
    with its own type, so type checkers still see its signature."""
    return registry.tool(fn, name=name, toolset=toolset, description=description)
