"""HC802 — tool schemas: every tool the env offers is a valid OpenAI function definition with a valid JSON Schema.

Validated with the ``jsonschema`` library (the draft 2020-12 metaschema) plus the function-calling rules the
OpenAI API applies on top: a function name of ``[a-zA-Z0-9_-]{1,64}``, object parameters, ``required`` names that
exist in ``properties``. A model server refuses (or a model ignores) a tool whose schema breaks them.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._observations.evaluation import EvalObservation
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _object_rules(schema: Any, where: str) -> list[str]:
    """``required`` names missing from ``properties`` at every object level of ``schema``."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    properties = schema.get("properties")
    required = schema.get("required")
    if isinstance(required, list) and (schema.get("type") == "object" or properties is not None):
        names = set(properties) if isinstance(properties, dict) else set()
        missing = [r for r in required if r not in names]
        if missing:
            problems.append(
                f"{where} lists {missing} in `required` but not in `properties` (it has {sorted(names)})"
            )
    if isinstance(properties, dict):
        for name, inner in properties.items():
            problems += _object_rules(inner, f"{where}.properties.{name}")
    if isinstance(schema.get("items"), dict):
        problems += _object_rules(schema["items"], f"{where}.items")
    return problems


def schema_problems(tool: Any) -> list[str]:
    """What is wrong with one entry of the env's tools (OpenAI format ``{"type": "function", "function": ...}``)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(tool, dict):
        return [f"a tool should be a dict; got {type(tool).__name__}"]
    function = tool.get("function", tool) if tool.get("type", "function") == "function" else None
    if not isinstance(function, dict):
        return [f"a tool should have type 'function' and a `function` dict; got {str(tool)[:120]}"]
    problems = []
    name = function.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(f"the function name should match [a-zA-Z0-9_-]{{1,64}}; got {name!r}")
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(parameters, dict):
        return [*problems, f"`parameters` should be a JSON Schema object; got {type(parameters).__name__}"]
    if parameters.get("type") != "object":
        problems.append(
            f"`parameters` should be an object schema (type 'object', the arguments by name); got type "
            f"{parameters.get('type')!r}"
        )
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as exc:
        at = "".join(f"[{p!r}]" for p in exc.absolute_path) or ""
        problems.append(f"`parameters{at}` is not valid JSON Schema: {exc.message}")
    problems += _object_rules(parameters, "`parameters`")
    return problems


def _offered(s: EnvSession) -> list[tuple[str, Any]]:
    """(where, tool) for the env's tools and for tools its own requests offered in evaluate() (none when
    evaluate() could not be observed: setup or the env failing is another check's finding)."""
    schemas, _names = s.tools()
    out = [("the env's tools", t) for t in schemas]
    seen = {repr(t) for t in schemas}
    try:
        requests = s.observe(EvalObservation).requests
    except (Exception, Skip, NotApplicable):
        requests = ()
    for call in requests:
        for tool in call.body.get("tools") or []:
            if repr(tool) not in seen:
                seen.add(repr(tool))
                out.append(("a tool evaluate() offered", tool))
    return out


@check(
    "HC802",
    "tool-schemas-valid",
    "every offered tool schema is valid (JSON Schema + function-calling rules)",
    why=(
        "The tool schemas go to the model server with every request; an invalid one is refused by the server or "
        "misread by the model, and a toolset that cannot be resolved stops every rollout."
    ),
    fix="Object parameters with JSON Schema type names and required names that exist; enable known toolsets.",
)
def tool_schemas_valid(s: EnvSession) -> list[Finding]:
    """A tool whose ``required`` names a parameter ``properties`` lacks, whose ``parameters`` is not an object
    schema, or that uses a type name JSON Schema does not have ("str", "int"): the model server rejects the request
    or the model never calls the tool right. Also reports, once, tools that cannot be resolved at all (a toolset
    hermes-envs lacks): the checks that need them are skipped naming this one."""
    from hermes_envs.conformance._findings import Blocked

    offered: list[tuple[str, Any]] = []
    try:
        offered = _offered(s)
    except Blocked:
        if s.tools_error is None:
            raise  # the env itself could not be built: HC109 reports that
    if s.tools_error is not None:
        message, exc = s.tools_error.what, s.tools_error.exc
        fix = str(exc).partition("Fix: ")[2].strip() or (
            "enable only toolsets hermes-envs has (`hermes_envs.tools.registry.toolsets()`), or register the "
            "missing tools with @tool(toolset=...) before the env is built."
        )
        return [
            Finding(
                "HC802",
                f"the env's tools should resolve; {message.rstrip('.')}. The rollout checks that need the tools are skipped.",
                fix.rstrip(".") + ".",
                subject="_resolve_tools_for_group",
            )
        ]
    if not offered:
        raise NotApplicable("the env offers no tools")
    findings = []
    names: dict[str, int] = {}
    for where, tool in offered:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = function.get("name", "?") if isinstance(function, dict) else "?"
        names[name] = names.get(name, 0) + 1
        for problem in schema_problems(tool):
            findings.append(
                Finding(
                    "HC802",
                    f"tool {name!r} ({where}) should have a valid function schema; {problem}.",
                    "write `parameters` as {'type': 'object', 'properties': {<name>: {'type': 'string', ...}}, "
                    "'required': [<names in properties>]} with JSON Schema type names (string, integer, number, "
                    "boolean, array, object), or derive it from a typed function with @tool.",
                    subject=f"tool {name}",
                )
            )
    for name, count in names.items():
        if count > 1:
            findings.append(
                Finding(
                    "HC802",
                    f"tool names should be unique; {name!r} is offered {count} times, so the model cannot tell "
                    "which one it calls.",
                    "rename one of them (or drop the duplicate toolset).",
                    subject=f"tool {name}",
                )
            )
    return findings
