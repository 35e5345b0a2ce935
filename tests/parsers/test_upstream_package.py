"""``environments.tool_call_parsers`` is a package with upstream hermes-agent's submodule paths and class names."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import environments.tool_call_parsers as pkg
import hermes_envs.parsers as ours
from hermes_envs.parsers import base

# upstream module -> (class, the names it is registered under upstream)
UPSTREAM = {
    "auto_parser": ("AutoToolCallParser", ["auto"]),
    "custom_xml_parser": ("CustomXmlToolCallParser", ["custom_xml"]),
    "deepseek_v3_parser": ("DeepSeekV3ToolCallParser", ["deepseek_v3"]),
    "deepseek_v3_1_parser": ("DeepSeekV31ToolCallParser", ["deepseek_v3_1", "deepseek_v31"]),
    "deepseek_v4_parser": ("DeepSeekV4ToolCallParser", ["deepseek_v4", "deepseek_dsml"]),
    "glm45_parser": ("Glm45ToolCallParser", ["glm45"]),
    "glm47_parser": ("Glm47ToolCallParser", ["glm47"]),
    "hermes_parser": ("HermesToolCallParser", ["hermes"]),
    "kimi_k2_parser": ("KimiK2ToolCallParser", ["kimi_k2"]),
    "llama_parser": ("LlamaToolCallParser", ["llama3_json"]),
    "longcat_parser": ("LongcatToolCallParser", ["longcat"]),
    "mistral_parser": ("MistralToolCallParser", ["mistral"]),
    "qwen3_coder_parser": ("Qwen3CoderToolCallParser", ["qwen3_coder"]),
    "qwen_parser": ("QwenToolCallParser", ["qwen"]),
}


@pytest.mark.parametrize("module", sorted(UPSTREAM))
def test_every_upstream_module_path_and_class_name(module):
    cls_name, names = UPSTREAM[module]
    cls = getattr(importlib.import_module(f"environments.tool_call_parsers.{module}"), cls_name)
    assert getattr(pkg, cls_name) is cls  # re-exported at the package root, as upstream's __init__ does
    for name in names:
        assert pkg.PARSER_REGISTRY[name] is cls  # upstream's class, a subclass of the shared registry's one
        assert issubclass(cls, base.PARSERS.get(name)) and type(pkg.get_parser(name)) is cls
    parser = cls()  # upstream instantiates with no arguments
    assert isinstance(parser, pkg.ToolCallParser)
    assert parser.parse("Just an answer.") == ("Just an answer.", None)  # upstream's (content, tool_calls)


def test_results_have_upstream_shape():
    content, calls = pkg.HermesToolCallParser().parse(
        'Sure.\n<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    )
    assert content == "Sure."
    (call,) = calls
    assert type(call).__name__.endswith("ToolCall") and call.type == "function"
    assert call.id.startswith("call_") and json.loads(call.function.arguments) == {"a": 1}
    detailed = pkg.HermesToolCallParser().parse_detailed(
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    )
    content, calls = detailed  # our ParseResult unpacks as upstream's ParseResult pair
    assert content is None and calls[0].function.name == "f"


def test_every_name_of_the_single_module_is_still_exported():
    for name in ours.__all__:
        if (
            name == "get_parser"
        ):  # upstream's: its classes and its KeyError wording (tests/compat/test_upstream_parsers.py)
            assert callable(pkg.get_parser)
            continue
        assert getattr(pkg, name) is getattr(ours, name)
    assert set(ours.__all__) <= set(pkg.__all__) and pkg.__all__ == sorted(pkg.__all__)


def test_a_parser_written_the_upstream_way_registers_and_parses():
    with base.PARSERS.isolated():

        @pkg.register_parser("upstream_style")
        class Bracketed(pkg.ToolCallParser):
            def parse(self, text: str) -> pkg.ParseResult:
                if "[[" not in text:
                    return text, None
                from environments.tool_call_parsers.common import make_tool_call

                name = text.split("[[", 1)[1].split("]]", 1)[0]
                return text.split("[[", 1)[0].strip() or None, [make_tool_call(name=name, arguments={})]

        assert "upstream_style" in pkg.list_parsers() and pkg.PARSER_REGISTRY["upstream_style"] is Bracketed
        parser = pkg.get_parser("upstream_style")
        assert parser.parse("Go. [[ping]]")[0] == "Go."
        result = parser.parse_detailed("Go. [[ping]]")  # what the agent loop and Phase 2 call
        assert result.content == "Go." and result.tool_calls[0].function.name == "ping"
    assert "upstream_style" not in pkg.PARSER_REGISTRY


def test_registry_mapping_writes_through_and_unknown_names_are_key_errors():
    with base.PARSERS.isolated():
        pkg.PARSER_REGISTRY["hermes_again"] = pkg.HermesToolCallParser
        assert type(pkg.get_parser("hermes_again")) is pkg.HermesToolCallParser
        del pkg.PARSER_REGISTRY["hermes_again"]
        assert "hermes_again" not in pkg.PARSER_REGISTRY
    with pytest.raises(KeyError, match="Available"):
        pkg.get_parser("nope")
    assert (
        len(pkg.PARSER_REGISTRY) == len(pkg.list_parsers())
        and sorted(pkg.PARSER_REGISTRY) == pkg.list_parsers()
    )


def test_common_helpers():
    from environments.tool_call_parsers import common

    assert (
        common.normalize_arguments({"a": "é"}) == '{"a": "é"}'
        and common.normalize_arguments('{"x":1}') == '{"x":1}'
    )
    assert common.make_uuid_id().startswith("call_") and common.make_uuid_id("t_").startswith("t_")
    mid = common.make_mistral_id()
    assert len(mid) == 9 and mid.isalnum()
    call = common.make_tool_call(name="f", arguments=[1], call_id="abc")
    assert (call.id, call.function.arguments) == ("abc", "[1]")
    text = "a <t> one </t> b <t>  </t> <t>two</t> <t> cut"
    assert common.extract_tagged_payloads(text, "<t>", "</t>") == ["one", "two", "cut"]
    assert common.split_content_from_first_marker("  hi <t>x", "<t>") == ("hi", True)
    assert common.split_content_from_first_marker("  ", "<t>") == (None, False)


def test_upstream_classes_stay_the_same_objects_after_the_loader_imports_another_env_file():
    # the loader gives each env file a fresh ``environments`` package; the upstream parser classes were defined in
    # the re-imported modules, so a class held from before (a test module's import) was a second object after it
    from hermes_envs.env import import_env_module

    before = importlib.import_module("environments.tool_call_parsers.glm45_parser").Glm45ToolCallParser
    import_env_module(Path(__file__).resolve().parents[2] / "environments" / "arithmetic_env.py")
    after = importlib.import_module("environments.tool_call_parsers.glm47_parser").Glm47ToolCallParser
    assert issubclass(after, before) and isinstance(after(), before)
    assert importlib.import_module("environments.tool_call_parsers").get_parser("glm47").__class__ is after
