"""HC8xx — parsers: the configured tool-call parser exists and round-trips the env's own tool schemas."""

from __future__ import annotations

import json
from typing import Any

from hermes_envs.conformance._findings import Finding, NotApplicable
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession


@check(
    "HC801",
    "parser-round-trip",
    "the configured tool_call_parser exists and round-trips the env's tools",
    requires=("HC102",),
    why=(
        "An unknown parser crashes rollouts; one that cannot round-trip the env's tools loses tool calls "
        "in Phase 2 (vLLM/SGLang)."
    ),
    fix="Set tool_call_parser to your model's format (hermes, qwen, ...).",
)
def parser_round_trip(s: EnvSession) -> list[Finding]:
    """A misspelled ``tool_call_parser`` (every rollout with text crashes), a parser whose ``parse(text)`` breaks
    the contract on plain text, or one that cannot carry the env's tool arguments (Phase 2 rollouts lose their tool
    calls). A parser written to the contract (``parse`` only, no ``render``) is checked for what the contract
    promises; the round trip is then not applicable."""
    from hermes_envs.parsers import get_parser, list_parsers
    from hermes_envs.parsers.invoke import parse_with
    from hermes_envs.testing.fake_server._policies import args_from_schema

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
    findings = _parses_plain_text(parser, name, schemas)
    if not _can_render(parser):
        if findings:
            return findings
        raise NotApplicable(
            f"the round trip of the env's tools was not checked: parser {name!r} has no render() (the contract "
            "defines only parse); checked that it is registered and that parse(text) returns (text, None) on plain "
            "text"
        )
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
        except NotImplementedError:  # renders some calls but not this one: the round trip cannot be judged
            continue
        except Exception as exc:
            calls, text = None, f"<{type(exc).__name__}: {exc}>"
        else:
            try:
                _content, calls = parse_with(parser, text, schemas)
            except Exception as exc:
                calls, text = None, f"{text} (parse raised {type(exc).__name__}: {exc})"
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


PLAIN_TEXT = "The answer is 42."


def _parses_plain_text(parser: Any, name: str, schemas: list[dict[str, Any]]) -> list[Finding]:
    """The contract's promise: ``parse(text)`` returns ``(content, tool_calls | None)``, plain text as ``(text, None)``."""
    from hermes_envs.parsers.invoke import parse_with

    try:
        got: Any = parse_with(parser, PLAIN_TEXT, schemas)
    except Exception as exc:
        got = f"{type(exc).__name__}: {exc}"
    else:
        if isinstance(got, tuple) and len(got) == 2 and got[0] == PLAIN_TEXT and not got[1]:
            return []
    return [
        Finding(
            "HC801",
            f"parser {name!r} should return (text, None) from parse(text) when the text holds no tool call; for "
            f"{PLAIN_TEXT!r} got {got!r:.200}.",
            "make parse(self, text) return a (content, tool_calls) pair: the text unchanged and None when it holds "
            "no tool call.",
            subject=f"tool_call_parser={name!r}",
        )
    ]


def _can_render(parser: Any) -> bool:
    """Whether the parser implements ``render`` (our extension; the contract's parsers only parse)."""
    from hermes_envs.parsers import ToolCallParser

    render = getattr(type(parser), "render", None)
    if not callable(render) or render is ToolCallParser.render:
        return False
    try:
        parser.render(None, [])
    except NotImplementedError:
        return False
    except Exception:  # an empty list may be refused; the real calls below will tell
        return True
    return True
