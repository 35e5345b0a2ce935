"""The registry, the public facade, and the package's import weight."""

from __future__ import annotations

import subprocess
import sys

import pytest

import hermes_envs.parsers as parsers
from hermes_envs.errors import HermesEnvsError
from hermes_envs.parsers import base

NAMES = [
    "auto",
    "custom_xml",
    "deepseek_dsml",
    "deepseek_v3",
    "deepseek_v31",
    "deepseek_v32",
    "deepseek_v3_1",
    "deepseek_v4",
    "glm45",
    "glm47",
    "hermes",
    "kimi_k2",
    "llama3_json",
    "llama4_json",
    "longcat",
    "mistral",
    "qwen",
    "qwen3_coder",
]


@pytest.fixture
def scratch_registry():
    with base.PARSERS.isolated():
        yield


def test_list_parsers_is_sorted_and_complete():
    assert parsers.list_parsers() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_get_parser_returns_a_new_instance_each_time(name):
    first, second = parsers.get_parser(name), parsers.get_parser(name)
    assert isinstance(first, parsers.ToolCallParser)
    assert first is not second
    assert first.parse("hello") == ("hello", None)


def test_alias_shares_the_class_and_keeps_the_canonical_name():
    assert type(parsers.get_parser("deepseek_v31")) is type(parsers.get_parser("deepseek_v3_1"))
    assert parsers.get_parser("deepseek_v31").name == "deepseek_v3_1"
    assert parsers.get_parser("qwen").name == "hermes"
    assert parsers.get_parser("llama4_json").name == "llama4_json"


def test_unknown_name_is_a_key_error_listing_names_and_suggesting_the_closest():
    with pytest.raises(KeyError) as info:
        parsers.get_parser("hermess")
    message = str(info.value)
    assert "Did you mean 'hermes'?" in message
    assert "deepseek_v3, deepseek_v31" in message and "qwen3_coder" in message
    assert isinstance(info.value, HermesEnvsError)


def test_register_parser_stacked_and_several_names_give_aliases(scratch_registry):
    @parsers.register_parser("fmt_b")
    @parsers.register_parser("fmt_a", "fmt_a2")
    class Fmt(parsers.ToolCallParser):
        pass

    assert Fmt.name == "fmt_a"
    assert {type(parsers.get_parser(n)) for n in ("fmt_a", "fmt_a2", "fmt_b")} == {Fmt}


def test_registering_a_taken_name_raises_naming_the_owner(scratch_registry):
    with pytest.raises(parsers.ParserRegistrationError) as info:

        @parsers.register_parser("brand_new", "hermes")
        class Dup(parsers.ToolCallParser):
            pass

    assert isinstance(info.value, ValueError) and isinstance(info.value, HermesEnvsError)
    assert "hermes_envs.parsers.json_tagged.HermesParser" in str(info.value)
    assert "brand_new" not in base.PARSERS  # nothing half-registered


def test_register_parser_rejects_bad_arguments(scratch_registry):
    with pytest.raises(parsers.ParserRegistrationError):
        parsers.register_parser()
    with pytest.raises(parsers.ParserRegistrationError):
        parsers.register_parser("x")(object)


def test_public_names_are_pinned():
    assert parsers.__all__ == sorted(parsers.__all__)
    assert set(parsers.__all__) == {
        "AutoParser", "CustomXmlParser", "DeepSeekV4Parser", "XmlLayout", "custom_xml_format",
        "DeepSeekV31Parser", "DeepSeekV3Parser", "Glm45Parser", "Glm47Parser", "HermesParser",
        "JsonTaggedParser", "KimiK2Parser", "Llama3JsonParser", "Llama4JsonParser", "LongcatParser",
        "MistralParser", "ParseResult", "ParserArgumentError", "ParserError", "ParserRegistrationError", "Qwen3CoderParser",
        "ToolCallParser", "ToolSchemas", "UnknownParserError", "XmlParamsParser", "convert_value",
        "get_parser", "list_parsers", "register_parser",
    }  # fmt: skip
    for name in parsers.__all__:
        assert hasattr(parsers, name)


def test_parsers_package_does_not_import_atroposlib():
    code = (
        "import sys, hermes_envs.parsers, hermes_envs.testing.strategies;"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {'atroposlib', 'transformers', 'torch', 'wandb'});"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _import_as(path, module_name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # deliberately not in sys.modules: the class is found through its code
    return module


PARSER_MODULE = """
from hermes_envs.parsers import ToolCallParser, register_parser


@register_parser("twice_fmt", "twice_alias")
class TwiceParser(ToolCallParser):
    def parse(self, text, tools=None):
        return text, None
"""


def test_the_same_parser_imported_twice_replaces_itself(scratch_registry, tmp_path):
    path = tmp_path / "twice_env.py"
    path.write_text(PARSER_MODULE)
    first = _import_as(path, "twice_env")
    second = _import_as(path, "hermes_conformance_twice_env")  # what --hermes-conformance does
    assert first.TwiceParser is not second.TwiceParser
    assert type(parsers.get_parser("twice_fmt")) is second.TwiceParser  # the latest wins
    assert type(parsers.get_parser("twice_alias")) is second.TwiceParser


def test_another_class_of_the_same_file_under_a_taken_name_still_raises(scratch_registry, tmp_path):
    path = tmp_path / "clash_env.py"
    path.write_text(
        PARSER_MODULE + '\n\n@register_parser("twice_fmt")\nclass Other(ToolCallParser):\n    pass\n'
    )
    with pytest.raises(parsers.ParserRegistrationError) as info:
        _import_as(path, "clash_env")
    message = str(info.value)
    assert "clash_env.TwiceParser" in message and "clash_env.Other" in message
    assert "choose another name" not in message
    assert "only one of TwiceParser and Other" in message


def test_a_class_of_another_file_under_a_taken_name_still_raises(scratch_registry, tmp_path):
    (tmp_path / "one_env.py").write_text(PARSER_MODULE)
    (tmp_path / "two_env.py").write_text(PARSER_MODULE)
    _import_as(tmp_path / "one_env.py", "one_env")
    with pytest.raises(parsers.ParserRegistrationError, match="choose another name"):
        _import_as(tmp_path / "two_env.py", "two_env")
