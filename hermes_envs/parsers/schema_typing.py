"""Typing parameter values that arrive as text (qwen3_coder, glm45, glm47) from the request's tool schemas.

The rule, in full:

* With a schema for the parameter (the caller passed ``tools`` and the tool declares the parameter):
  the JSON-schema types are collected from ``type`` (a string or a list), ``anyOf``/``oneOf`` branches and
  ``enum``/``const`` values. ``string`` alone keeps the text verbatim (``"null"``, ``"42"``, inner whitespace
  included). Otherwise each declared non-string type is tried in the order ``null, boolean, integer, number,
  object, array``: the text is read as JSON, then as a Python literal (``True``, ``None``, ``{'a': 1}``), and the
  first value of a declared type wins. ``anyOf [T, null]`` therefore maps ``null``/``None`` to None and anything
  else to T. If no declared type fits, a declared ``string`` keeps the text; with no string type the text is kept
  as a string and the mismatch is reported.
* Without a schema for the parameter (no ``tools``, an unknown tool, an undeclared parameter, or a parameter
  schema with no type information): the value stays a string, verbatim. Any text is a valid string, so no
  conversion is unambiguous (a ``write_file`` ``content`` of ``{"a": 1}`` is a file, not an object).
"""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeGuard

from hermes_envs.parsers._types import JSONObject, JSONValue
from hermes_envs.parsers.base import loads_strict

__all__ = ["ToolSchemas", "convert_value", "render_value", "schema_types"]

_ORDER = ("null", "boolean", "integer", "number", "object", "array")

# Type names outside JSON Schema that tool schemas in the wild use, read as vLLM's Qwen3-Coder parser reads them
# (its tests declare "float", "int", "dict" ...). Prefixes are matched after the exact names.
_ALIASES = {
    "int": "integer", "int32": "integer", "int64": "integer", "uint": "integer", "long": "integer",
    "short": "integer", "unsigned": "integer", "float": "number", "double": "number", "decimal": "number",
    "bool": "boolean", "binary": "boolean", "str": "string", "text": "string", "varchar": "string",
    "char": "string", "enum": "string", "dict": "object", "map": "object", "obj": "object", "list": "array",
    "arr": "array", "tuple": "array", "none": "null",
}  # fmt: skip
_PREFIXES = (("int", "integer"), ("uint", "integer"), ("num", "number"), ("float", "number"),
             ("dict", "object"), ("list", "array"))  # fmt: skip


def normal_type(name: str) -> str:
    """A declared type name as a JSON-Schema type: ``"float"`` -> ``"number"``, ``"dict[str, int]"`` -> ``"object"``."""
    lowered = name.strip().lower()
    if lowered in _ORDER or lowered == "string":
        return lowered
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    for prefix, kind in _PREFIXES:
        if lowered.startswith(prefix):
            return kind
    return lowered


def _is_mapping(value: object) -> TypeGuard[Mapping[str, JSONValue]]:
    return type(value) is dict or isinstance(value, Mapping)


def _as_mapping(tool: object) -> object:
    """A tool given as an object (openai's or vLLM's pydantic models, a dataclass) as a plain mapping."""
    if isinstance(tool, Mapping) or tool is None:
        return tool
    dump = getattr(tool, "model_dump", None)
    if callable(dump):
        try:
            return dump(exclude_none=True)
        except Exception:  # a foreign model_dump signature: fall back to attributes below
            pass
    if dataclasses.is_dataclass(tool) and not isinstance(tool, type):
        return dataclasses.asdict(tool)
    fn = getattr(tool, "function", None)
    if fn is not None:
        return {"function": _as_mapping(fn)}
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return {"name": name, "parameters": getattr(tool, "parameters", None)}
    return tool


class ToolSchemas:
    """Index of an OpenAI ``tools`` list: tool name -> its ``parameters.properties``.

    Accepts ``[{"type": "function", "function": {"name", "parameters"}}]`` and bare ``{"name", "parameters"}``
    entries, as mappings or as objects (openai's or vLLM's pydantic tool models, dataclasses); anything malformed
    is skipped (a parser must not fail because of the request's schema).
    """

    def __init__(self, tools: Iterable[object] | None) -> None:
        self._props: dict[str, JSONObject] = {}
        self._types: dict[
            int, tuple[JSONValue, set[str]]
        ] = {}  # id(schema) -> (schema, its types), for this parse
        for tool in tools or ():
            if (
                type(tool) is not dict
            ):  # (plain dicts first: the ABC isinstance checks are slow, and run per parse)
                tool = _as_mapping(tool)
                if not isinstance(tool, Mapping):
                    continue
            fn = tool.get("function")
            if not _is_mapping(fn):
                fn = tool
            name = fn.get("name")
            params = fn.get("parameters")
            if not isinstance(name, str):
                continue
            props = params.get("properties") if _is_mapping(params) else None
            self._props[name] = dict(props) if _is_mapping(props) else {}

    def properties(self, tool_name: str) -> JSONObject | None:
        """The declared properties of ``tool_name``, or None when the tool is not in the list."""
        return self._props.get(tool_name)

    def types_of(self, schema: JSONValue) -> set[str]:
        """:func:`schema_types` of a parameter schema, worked out once per parse (every call repeats them)."""
        known = self._types.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        types = schema_types(schema)
        self._types[id(schema)] = (schema, types)
        return types


def schema_types(schema: JSONValue) -> set[str]:
    """The JSON-schema type names a (sub)schema allows; empty when it says nothing about types."""
    if type(schema) is not dict and not isinstance(schema, Mapping):  # (the ABC check is slow: dicts first)
        return set()
    found: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        found.add(normal_type(declared))
    elif isinstance(declared, list):
        found.update(normal_type(t) for t in declared if isinstance(t, str))
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                found |= schema_types(branch)
    values = list(schema.get("enum") or []) if isinstance(schema.get("enum"), list) else []
    if "const" in schema:
        values.append(schema["const"])
    for value in values:
        found.add(_type_of(value))
    return found


def _type_of(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array"


def _fits(value: JSONValue, type_name: str) -> bool:
    if type_name == "null":
        return value is None
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "array":
        return isinstance(value, list)
    return False


def _readings(raw: str) -> Iterator[JSONValue]:
    """The non-string values ``raw`` can mean: JSON first, then a Python literal, then case-folded keywords.

    Two spellings models (and SGLang's raw GLM output) use are read as well: a value quoted as a JSON string
    (``"5"`` for an integer) is read again without the quotes, and a value whose JSON is escaped as if it sat inside
    a string (``[{\\"id\\": 1}]``) is read after undoing the escapes once.
    """
    text = raw.strip()
    if not text:
        return
    try:
        value = loads_strict(text)
    except ValueError:
        value = None
        if '\\"' in text:  # escaped JSON: undo one level of string escapes, then read it
            try:
                unescaped = json.loads(f'"{text}"')
            except ValueError:
                pass
            else:
                yield from _readings(unescaped) if unescaped.strip() != text else ()
    else:
        if isinstance(value, str) and value.strip() != text:  # a quoted value: read what is inside the quotes
            yield from _readings(value)
        yield value
    if len(text) <= 100_000:  # literal_eval on megabytes of nesting is slow and can overflow the C stack
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        else:
            if isinstance(value, tuple):
                value = list(value)
            try:  # only values that survive JSON (no sets, bytes, complex numbers)
                yield json.loads(json.dumps(value))
            except (TypeError, ValueError):
                pass
    lowered = text.lower()
    if lowered in ("true", "false"):
        yield lowered == "true"
    elif lowered in ("null", "none"):
        yield None


def convert_value(raw: str, schema: JSONValue, types: set[str] | None = None) -> tuple[JSONValue, str | None]:
    """Convert one parameter's text by its schema (see the module docstring).

    Returns ``(value, problem)``; ``problem`` is None, or a sentence saying the text did not fit the schema
    (the text is then kept as a string). ``types`` is ``schema_types(schema)`` when the caller already has it.
    """
    if types is None:
        types = schema_types(schema)
    wanted = [t for t in _ORDER if t in types]
    if not wanted:
        return raw, None
    for value in _readings(raw):
        for type_name in wanted:
            if _fits(value, type_name):
                return value, None
        if "integer" in wanted and isinstance(value, float) and value.is_integer():
            return int(value), None
    if "string" in types:
        return raw, None
    return raw, f"should be {' or '.join(wanted)} per the tool schema; got {raw[:60]!r} (kept as a string)"


def render_value(value: JSONValue) -> str:
    """How a value is written in XML-ish formats: strings verbatim, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def lookup(properties: Mapping[str, JSONValue] | None, key: str) -> JSONValue:
    """The schema of ``key`` in ``properties``, or None."""
    if properties is None:
        return None
    return properties.get(key)
