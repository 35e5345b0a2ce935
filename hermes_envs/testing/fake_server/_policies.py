"""Policies: Python callables that answer a chat request, ``(request_body) -> Turn | dict | str``.

A policy answers every request when the server has no script, and the requests the script misses when it has one.
Built-in probe policies (used by the conformance kit) are available by name through :func:`get_policy`:

- ``do_nothing``: an empty reply (content ``""``).
- ``refuse``: "I can't help with that."
- ``echo``: repeats the last user message.
- ``answer`` (``text=...``): answers with the given string.
- ``call_each_tool`` (``answer=...``, ``parallel=False``): calls each offered tool once, one per turn (or all in one
  turn with ``parallel=True``), with arguments generated from its JSON schema, then answers.
- ``spam_tools`` (``times=5``): calls the first offered tool ``times`` times in a row, then answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hermes_envs._definitions import definition_site
from hermes_envs._registry import Registry
from hermes_envs.errors import UnknownNameError

from ._requests import BadRequest
from ._tool_call import ToolCall
from ._turns import Turn
from ._view import RequestView

__all__ = [
    "MAX_ARRAY_ITEMS",
    "MAX_GENERATED_VALUES",
    "MAX_STRING_CHARS",
    "POLICIES",
    "Policy",
    "SchemaArgumentsError",
    "UnknownPolicyError",
    "args_from_schema",
    "get_policy",
    "parse_policy_spec",
    "register_policy",
]


class UnknownPolicyError(UnknownNameError, ValueError):
    """A policy name nobody registered (a ValueError too, as ``get_policy`` raised before the shared registry)."""


Policy = Callable[[dict[str, Any]], "Turn | dict[str, Any] | str"]
PolicyFactory = Callable[..., Policy]

POLICIES: Registry[PolicyFactory] = Registry(
    "policy",
    unknown_error=UnknownPolicyError,
    unknown_fix="pick a built-in name or pass a callable (request_body) -> Turn | dict | str.",
)
"""Policy factories by name (the shared registry: one duplicate-name rule, ``POLICIES.isolated()`` for tests)."""


def register_policy(name: str) -> Callable[[PolicyFactory], PolicyFactory]:
    """Register a policy factory under ``name``; another factory under a taken name is a RegistryError (the same
    definition imported again, e.g. an env module loaded twice, replaces it)."""

    def deco(factory: PolicyFactory) -> PolicyFactory:
        return POLICIES.register(name, factory, site=definition_site(factory))

    return deco


def get_policy(name: str, **kwargs: Any) -> Policy:
    """A built-in (or registered) policy by name, configured with ``kwargs``."""
    return POLICIES.get(name)(**kwargs)


def parse_policy_spec(spec: str) -> Policy:
    """``NAME[:key=value,...]`` (CLI form), e.g. ``answer:text=42``."""
    name, _, rest = spec.partition(":")
    kwargs: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, val = part.partition("=")
        if not eq:
            raise ValueError(f"policy option should be key=value; got {part!r} in {spec!r}")
        kwargs[key.strip()] = _coerce(val.strip())
    return get_policy(name.strip(), **kwargs)


def _coerce(v: str) -> Any:
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def _named(fn: Policy, name: str) -> Policy:
    fn.__name__ = fn.__qualname__ = name
    return fn


@register_policy("do_nothing")
def do_nothing() -> Policy:
    turn = Turn(content="")  # built once: the server never changes a turn, and a request costs less
    return _named(lambda body: turn, "do_nothing")


@register_policy("refuse")
def refuse(text: str = "I can't help with that.") -> Policy:
    turn = Turn(content=text)
    return _named(lambda body: turn, "refuse")


@register_policy("echo")
def echo() -> Policy:
    return _named(lambda body: Turn(content=RequestView(body).last_user or ""), "echo")


@register_policy("answer")
def answer(text: str = "42") -> Policy:
    turn = Turn(content=str(text))
    return _named(lambda body: turn, "answer")


def _offered_tools(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for t in body.get("tools") or []:
        if isinstance(t, Mapping):
            fn: Any = t.get("function") if isinstance(t.get("function"), Mapping) else t
            if isinstance(fn.get("name"), str):
                out.append(fn)
    return out


def _called_names(body: Mapping[str, Any]) -> list[str]:
    names = []
    for m in body.get("messages") or []:
        if isinstance(m, Mapping) and m.get("role") == "assistant":
            for tc in m.get("tool_calls") or []:
                fn = tc.get("function") if isinstance(tc, Mapping) else None
                if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                    names.append(fn["name"])
    return names


def _args(tool: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for an offered tool; a schema keyword of the wrong type is the request's fault (HTTP 400)."""
    try:
        return args_from_schema(tool.get("parameters"), tool["name"])
    except SchemaArgumentsError as e:
        raise BadRequest(f"POST /v1/chat/completions `tools`: {e}", "invalid_tool_schema") from None


@register_policy("call_each_tool")
def call_each_tool(answer: str = "Done.", parallel: bool = False) -> Policy:
    def policy(body: dict[str, Any]) -> Turn:
        tools = _offered_tools(body)
        called = set(_called_names(body))
        todo = [t for t in tools if t["name"] not in called]
        if not todo:
            return Turn(content=answer)
        pick = todo if parallel else todo[:1]
        # (ToolCall encodes a dict of arguments as JSON itself)
        return Turn(tool_calls=[ToolCall(name=t["name"], arguments=_args(t)) for t in pick])  # type: ignore[arg-type]

    return _named(policy, "call_each_tool")


@register_policy("spam_tools")
def spam_tools(times: int = 5, answer: str = "Done.") -> Policy:
    def policy(body: dict[str, Any]) -> Turn:
        tools = _offered_tools(body)
        if not tools or len(_called_names(body)) >= times:
            return Turn(content=answer)
        t = tools[0]
        return Turn(tool_calls=[ToolCall(name=t["name"], arguments=_args(t))])  # type: ignore[arg-type]

    return _named(policy, "spam_tools")


MAX_ARRAY_ITEMS = 16
"""The most items generated for one array (``minItems`` above it is capped: a probe call, not a load test)."""

MAX_STRING_CHARS = 4096
"""The longest string generated (``minLength`` above it is capped)."""

MAX_GENERATED_VALUES = 2000
"""The most values (strings, numbers, items ...) generated for one call's arguments, however the schema nests."""


class SchemaArgumentsError(ValueError):
    """A tool schema keyword :func:`args_from_schema` cannot use (``minimum: "abc"``); the message names it."""


def args_from_schema(schema: Any, tool: str = "") -> dict[str, Any]:
    """Deterministic arguments satisfying a JSON schema's types, required fields, enums and bounds.

    Bounded whatever the schema asks: at most :data:`MAX_ARRAY_ITEMS` items per array, :data:`MAX_STRING_CHARS`
    characters per string and :data:`MAX_GENERATED_VALUES` values in all (``minItems: 1e8`` or arrays nested
    ``100^4`` deep would otherwise stall the server). A keyword of the wrong type raises
    :class:`SchemaArgumentsError`."""
    budget = [MAX_GENERATED_VALUES]
    root = schema if isinstance(schema, Mapping) else {"type": "object"}
    value = _value(root, 0, budget, tool or "the tool")
    return value if isinstance(value, dict) else {}


def _number(schema: Mapping[str, Any], key: str, default: float, tool: str) -> float:
    """``schema[key]`` as a finite number (``default`` when absent), or :class:`SchemaArgumentsError`."""
    value = schema.get(key, default)
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value != value
        or abs(value) == float("inf")
    ):
        raise SchemaArgumentsError(
            f"tool {tool!r} parameters should give `{key}` as a finite number; got {value!r}.\n"
            f"Fix: write `{key}` as a JSON number in the tool's schema (JSON Schema keyword)."
        )
    return value


def _value(schema: Mapping[str, Any], depth: int, budget: list[int], tool: str) -> Any:
    budget[0] -= 1
    if "const" in schema:
        return schema["const"]
    if schema.get("enum") and isinstance(schema["enum"], list):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        listed = schema.get(key)
        options = (
            [s for s in listed if isinstance(s, Mapping) and s.get("type") != "null"]
            if isinstance(listed, list)
            else []
        )
        if options:
            return _value(options[0], depth, budget, tool)
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "null")
    if typ is None:
        typ = "object" if "properties" in schema else "string"
    if typ == "object":
        props = schema.get("properties")
        if depth > 4 or not isinstance(props, Mapping):
            return {}
        out = {}
        for k, v in props.items():
            if budget[0] <= 0:
                break
            out[k] = _value(v if isinstance(v, Mapping) else {}, depth + 1, budget, tool)
        return out
    if typ == "array":
        items: Any = schema.get("items") if isinstance(schema.get("items"), Mapping) else {"type": "string"}
        n = int(min(max(1, _number(schema, "minItems", 1, tool)), MAX_ARRAY_ITEMS))
        if depth > 4:
            return []
        out_items = []
        for _ in range(n):
            if budget[0] <= 0:
                break
            out_items.append(_value(items, depth + 1, budget, tool))
        return out_items
    if typ == "integer":
        if "minimum" in schema:
            lo = _number(schema, "minimum", 1, tool)
        elif "exclusiveMinimum" in schema:
            lo = _number(schema, "exclusiveMinimum", 0, tool) + 1
        else:
            lo = 1
        hi = _number(schema, "maximum", lo, tool) if "maximum" in schema else lo
        return int(min(lo, hi))
    if typ == "number":
        lo = _number(schema, "minimum", 1.0, tool)
        hi = _number(schema, "maximum", lo, tool) if "maximum" in schema else lo
        return float(min(lo, hi))
    if typ == "boolean":
        return True
    if typ == "null":
        return None
    n = int(min(max(0, _number(schema, "minLength", 0, tool)), MAX_STRING_CHARS))
    return "test" if n <= 4 else "t" * n


def resolve_policy(policy: Any) -> Policy | None:
    """None, a callable, or a built-in name / ``NAME:k=v`` spec."""
    if policy is None or callable(policy):
        return policy
    if isinstance(policy, str):
        return parse_policy_spec(policy)
    raise TypeError(f"policy should be a callable or a built-in policy name; got {policy!r}")


def turn_from_policy_result(result: Any) -> Turn:
    if isinstance(result, Turn):
        return result
    if isinstance(result, (str, Mapping)):
        return Turn.from_obj(result)
    raise TypeError(
        f"a policy should return a Turn, a dict in the script's turn schema, or a str; got {result!r}"
    )
