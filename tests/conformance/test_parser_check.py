"""HC801 on custom parsers: one written to the contract (``parse(text)`` only) is checked for what the contract
promises, and the round trip (which needs our ``render`` extension) is not applicable rather than an error."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._findings import NotApplicable
from hermes_envs.conformance.checks.parsers import parser_round_trip
from hermes_envs.parsers import ToolCallParser, base, register_parser
from hermes_envs.parsers.base import make_tool_call

EXAMPLE = (Path(__file__).parents[2] / "environments" / "arithmetic_env.py").read_text()
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    }
]
_CALL = re.compile(r"\[\[CALL (\w+) (\{.*?\})\]\]", re.S)


def bracket_parse(text):
    matches = list(_CALL.finditer(text))
    if not matches:
        return text, None
    calls = [make_tool_call(m.group(1), json.dumps(json.loads(m.group(2)))) for m in matches]
    return text[: matches[0].start()].strip() or None, calls


@pytest.fixture(autouse=True)
def scratch_registry():
    with base.PARSERS.isolated():
        yield


def session_for(parser_name: str) -> SimpleNamespace:
    config = SimpleNamespace(tool_call_parser=parser_name)
    return SimpleNamespace(env=lambda: SimpleNamespace(config=config), tools=lambda: (TOOLS, {"terminal"}))


def test_a_contract_parser_without_render_is_checked_on_plain_text_and_the_round_trip_is_not_applicable():
    @register_parser("contract_bracket")
    class ContractParser(ToolCallParser):
        def parse(self, text):  # the contract's signature: no tools, no render
            return bracket_parse(text)

    with pytest.raises(NotApplicable, match="has no render.*parse.text. returns .text, None. on plain text"):
        parser_round_trip(session_for("contract_bracket"))


def test_a_parser_class_with_no_render_attribute_at_all_is_not_applicable_too(monkeypatch):
    class Plain:  # not even our base class: what a ported upstream parser may look like
        def parse(self, text, tools=None):
            return bracket_parse(text)

    base.PARSERS.register("plain_bracket", Plain)
    with pytest.raises(NotApplicable):
        parser_round_trip(session_for("plain_bracket"))


def test_a_contract_parser_that_breaks_the_plain_text_promise_is_an_error():
    @register_parser("mangles_text")
    class Mangles(ToolCallParser):
        def parse(self, text):
            return None, []

    (finding,) = parser_round_trip(session_for("mangles_text"))
    assert "should return (text, None) from parse(text) when the text holds no tool call" in finding.message
    assert "(None, [])" in finding.message


def test_a_parser_that_renders_still_gets_the_round_trip():
    @register_parser("renders_wrong")
    class RendersWrong(ToolCallParser):
        def parse(self, text):
            return bracket_parse(text)

        def render(self, content, tool_calls):
            return "[[CALL nothing_useful {}]]"

    (finding,) = parser_round_trip(session_for("renders_wrong"))
    assert "should read back the tool calls it writes" in finding.message
    assert parser_round_trip(session_for("hermes")) == []


def test_an_env_with_a_contract_parser_is_not_failed_by_hc801(tmp_path: Path):
    source = EXAMPLE.replace(
        "\nclass ArithmeticTerminalEnv(",
        "\nfrom environments.tool_call_parsers import ToolCallParser, register_parser\n\n\n"
        '@register_parser("contract_env_bracket")\n'
        "class BracketParser(ToolCallParser):\n"
        "    def parse(self, text):\n"
        "        return text, None\n\n\n"
        "class ArithmeticTerminalEnv(",
    ).replace(
        'enabled_toolsets=["terminal"],',
        'enabled_toolsets=["terminal"],\n            tool_call_parser="contract_env_bracket",',
    )
    assert "contract_env_bracket" in source.split("class ArithmeticTerminalEnv(")[1]
    path = tmp_path / "contract_parser_env.py"
    path.write_text(source)
    with EnvSession(path, settings=Settings(select=["HC801"])) as session:
        outcome = session.run("HC801")
    assert outcome.status is Status.NOT_APPLICABLE, outcome.findings
    assert "'contract_env_bracket' has no render()" in outcome.note
