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
import enum
import inspect
import json
import re
import threading
import types
import typing
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from hermes_envs._definitions import same_definition, same_file, where
from hermes_envs._registry import Registry
from hermes_envs.errors import ToolRegistryError

__all__ = ["Tool", "ToolRegistry", "registry", "schema_from_function", "tool"]

TASK_ID = "task_id"
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


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    sig = _signature(fn)
    return sig is not None and name in sig.parameters


def _accepts_var_keyword(fn: Callable[..., Any]) -> bool:
    sig = _signature(fn)
    return sig is not None and any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


# ---------------------------------------------------------------------------------------------- schema derivation
_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_schema(hint: Any, where: str) -> tuple[dict, bool]:
    """JSON schema for a type hint, and whether the hint admits None."""
    if hint is inspect.Parameter.empty or hint is Any:
        return {}, False
    if hint is None or hint is type(None):
        return {"type": "null"}, True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or (hasattr(types, "UnionType") and isinstance(hint, types.UnionType)):
        non_none = [a for a in args if a is not type(None)]
        nullable = len(non_none) < len(args)
        if len(non_none) == 1:
            return _type_schema(non_none[0], where)[0], nullable
        return {"anyOf": [_type_schema(a, where)[0] for a in non_none]}, nullable
    if origin is Literal:
        values = list(args)
        kinds = {_SCALARS.get(type(v)) for v in values}
        schema: dict = {"enum": values}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), "enum": values}
        return schema, None in values
    if origin is typing.Annotated:
        inner, *meta = args
        schema, nullable = _type_schema(inner, where)
        text = next((m for m in meta if isinstance(m, str)), None)
        if text:
            schema = {**schema, "description": text}
        return schema, nullable
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}, False
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        kinds = {_SCALARS.get(type(v)) for v in values}
        return ({"type": kinds.pop(), "enum": values} if len(kinds) == 1 else {"enum": values}), False
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "prefixItems": [_type_schema(a, where)[0] for a in args]}, False
        item = args[0] if args else Any
        return {"type": "array", "items": _type_schema(item, where)[0]}, False
    if hint is dict or origin is dict:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = _type_schema(args[1], where)[0]
        return schema, False
    raise ToolRegistryError(
        f"{where} should have a JSON-compatible type hint (str, int, float, bool, list[T], dict, Optional[T], "
        f"Literal[...], an Enum); got {hint!r}. Fix: change the hint, or register a Tool with explicit parameters."
    )


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_OTHER_HEADER = re.compile(r"^\s*(Returns?|Raises|Yields|Examples?|Notes?|See Also)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*\**(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.match(line) or _OTHER_HEADER.match(line):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    in_args = False
    args_indent: int | None = None
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args, args_indent, current = True, None, None
            continue
        if not in_args:
            continue
        if _OTHER_HEADER.match(line):
            break
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if args_indent is None:
            args_indent = indent
        m = _ARG_LINE.match(line)
        if m and indent <= args_indent:
            current = m.group(1)
            params[current] = m.group(3).strip()
        elif current is not None and indent > args_indent:
            params[current] = (params[current] + " " + line.strip()).strip()
        elif indent < args_indent:
            break
    return " ".join(summary), params


def schema_from_function(fn: Callable[..., Any], *, name: str | None = None) -> tuple[str, dict]:
    """(description, parameters JSON schema) derived from ``fn``'s signature, type hints and docstring."""
    label = name or getattr(fn, "__name__", repr(fn))
    sig = _signature(fn)
    if sig is None:
        raise ToolRegistryError(f"tool {label!r}: cannot read the signature of {fn!r}.")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise ToolRegistryError(
            f"tool {label!r}: its type hints should be resolvable; got {type(exc).__name__}: {exc}. "
            "Fix: import the names used in the annotations at module level."
        ) from exc
    description, param_docs = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, dict] = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if pname == TASK_ID or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolRegistryError(
                f"tool {label!r}: parameter {pname!r} should not be positional-only (tools are called with "
                "keyword arguments). Fix: remove the '/' from the signature."
            )
        schema, _nullable = _type_schema(
            hints.get(pname, param.annotation), f"tool {label!r} parameter {pname!r}"
        )
        schema = dict(schema)
        if pname in param_docs and "description" not in schema:
            schema["description"] = param_docs[pname]
        if param.default is param.empty:
            required.append(pname)
        elif param.default is not None:
            default = param.default.value if isinstance(param.default, enum.Enum) else param.default
            try:
                json.dumps(default)
                schema["default"] = default
            except (TypeError, ValueError):
                pass
        properties[pname] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if not description:
        description = label.replace("_", " ")
    return description, parameters


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

    def isolated(self) -> AbstractContextManager[Registry[Tool]]:
        """Within the block, tools registered or removed are restored on exit (for tests)."""
        return self._entries.isolated()

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
            raise KeyError(self._unknown(name))
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
            raise KeyError(self._unknown(name))
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
        return f"unknown tool {name!r}; registered tools: {self._entries.names()}"


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
    raise RuntimeError(
        f"tool {name!r} is async and was dispatched synchronously from a running event loop. "
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
