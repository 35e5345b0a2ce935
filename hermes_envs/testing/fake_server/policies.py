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

from .tool_call import ToolCall
from .turns import Turn
from .view import RequestView

__all__ = [
    "POLICIES",
    "Policy",
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
    out = []
    for t in body.get("tools") or []:
        if isinstance(t, Mapping):
            fn = t.get("function") if isinstance(t.get("function"), Mapping) else t
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


@register_policy("call_each_tool")
def call_each_tool(answer: str = "Done.", parallel: bool = False) -> Policy:
    def policy(body: dict[str, Any]) -> Turn:
        tools = _offered_tools(body)
        called = set(_called_names(body))
        todo = [t for t in tools if t["name"] not in called]
        if not todo:
            return Turn(content=answer)
        pick = todo if parallel else todo[:1]
        return Turn(
            tool_calls=[
                ToolCall(name=t["name"], arguments=args_from_schema(t.get("parameters"))) for t in pick
            ]
        )

    return _named(policy, "call_each_tool")


@register_policy("spam_tools")
def spam_tools(times: int = 5, answer: str = "Done.") -> Policy:
    def policy(body: dict[str, Any]) -> Turn:
        tools = _offered_tools(body)
        if not tools or len(_called_names(body)) >= times:
            return Turn(content=answer)
        t = tools[0]
        return Turn(tool_calls=[ToolCall(name=t["name"], arguments=args_from_schema(t.get("parameters")))])

    return _named(policy, "spam_tools")


def args_from_schema(schema: Any) -> dict[str, Any]:
    """Deterministic arguments satisfying a JSON schema's types, required fields, enums and bounds."""
    value = _value(schema if isinstance(schema, Mapping) else {"type": "object"}, depth=0)
    return value if isinstance(value, dict) else {}


def _value(schema: Mapping[str, Any], depth: int) -> Any:
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [s for s in schema.get(key) or [] if isinstance(s, Mapping) and s.get("type") != "null"]
        if options:
            return _value(options[0], depth)
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if t != "null"), "null")
    if typ is None:
        typ = "object" if "properties" in schema else "string"
    if typ == "object":
        if depth > 4:
            return {}
        props = schema.get("properties") or {}
        return {k: _value(v if isinstance(v, Mapping) else {}, depth + 1) for k, v in props.items()}
    if typ == "array":
        items = schema.get("items") if isinstance(schema.get("items"), Mapping) else {"type": "string"}
        n = max(1, int(schema.get("minItems", 1)))
        return [_value(items, depth + 1) for _ in range(n)] if depth <= 4 else []
    if typ == "integer":
        lo = schema.get(
            "minimum", schema.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in schema else 1
        )
        hi = schema.get("maximum")
        return int(min(lo, hi) if hi is not None else lo)
    if typ == "number":
        lo = schema.get("minimum", 1.0)
        hi = schema.get("maximum")
        return float(min(lo, hi) if hi is not None else lo)
    if typ == "boolean":
        return True
    if typ == "null":
        return None
    n = int(schema.get("minLength", 0))
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
