"""HC8xx — parsers: the configured tool-call parser exists and round-trips the env's own tool schemas."""

from __future__ import annotations

import json

from hermes_envs.conformance.findings import Finding, NotApplicable
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession


@check(
    "HC801",
    "parser-round-trip",
    "the configured tool_call_parser exists and round-trips the env's tools",
    requires=("HC102",),
)
def parser_round_trip(s: EnvSession) -> list[Finding]:
    """A misspelled ``tool_call_parser`` (every rollout with text crashes), or a parser that cannot carry the env's
    tool arguments (Phase 2 rollouts lose their tool calls)."""
    from hermes_envs.parsers import get_parser, list_parsers
    from hermes_envs.testing.fake_server.policies import args_from_schema

    config = getattr(s.env(), "config", None)
    name = getattr(config, "tool_call_parser", None)
    if not name:
        raise NotApplicable("the env's config has no tool_call_parser")
    try:
        parser = get_parser(name)
    except KeyError:
        return [
            Finding(
                "HC801",
                f"tool_call_parser should name a registered parser; got {name!r} (available: "
                f"{', '.join(list_parsers())}).",
                "set tool_call_parser in config_init (or --env.tool_call_parser) to the parser of your model's "
                "chat format, e.g. 'hermes' for Hermes/Qwen2.5 models.",
                subject=f"tool_call_parser={name!r}",
            )
        ]
    schemas, _names = s.tools()
    findings = []
    for schema in schemas:
        function = schema.get("function", schema)
        tool = function.get("name", "")
        arguments = args_from_schema(function.get("parameters") or {})
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": tool, "arguments": json.dumps(arguments)},
        }
        try:
            text = parser.render(None, [call])
            _content, calls = parser.parse(text, tools=schemas)
        except Exception as exc:
            calls, text = None, f"<{type(exc).__name__}: {exc}>"
        got = [(c.function.name, json.loads(c.function.arguments)) for c in calls or []]
        if got != [(tool, arguments)]:
            findings.append(
                Finding(
                    "HC801",
                    f"parser {name!r} should read back the tool calls it writes; for tool {tool!r} with arguments "
                    f"{arguments!r} it rendered {text[:160]!r} and parsed {got!r}.",
                    "pick the parser matching your model's chat template, or simplify the tool's parameters; report "
                    "a parser bug to hermes-envs with this message.",
                    subject=f"tool {tool}",
                )
            )
    return findings
