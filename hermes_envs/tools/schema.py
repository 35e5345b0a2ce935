"""JSON schemas for tools, derived from a typed function: type hints -> JSON Schema, the docstring's first
paragraph -> description, its ``Args:`` section -> parameter descriptions, defaults -> not required.

Kept apart from the registry (which only names, groups and dispatches tools) so each module holds one job.
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from hermes_envs.errors import ToolRegistryError

__all__ = ["TASK_ID", "parse_docstring", "schema_from_function", "signature_of"]

#: A handler parameter of this name gets the rollout's task id from dispatch, and is not part of the schema.
TASK_ID = "task_id"


def signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    """``inspect.signature(fn)``, or None when it cannot be read (some builtins)."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


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
    label = str(name or getattr(fn, "__name__", repr(fn)))
    sig = signature_of(fn)
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
