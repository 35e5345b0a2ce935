"""Model outputs in the shapes used by other projects' parser suites and by the models' chat templates.

The cases mirror vLLM's tool-parser tests (``tests/tool_use``, ``tests/entrypoints/openai/tool_parsers``),
SGLang's function-call detector tests (``test/srt/test_function_call_parser.py``) and the outputs the models'
own chat templates produce. Where vLLM and SGLang disagree, the test names the choice we made (see
docs/parsers.md, "Upstream differences").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_envs.parsers import ParseResult, get_parser


def calls(result: ParseResult | tuple) -> list[tuple[str, Any]]:
    found = result.tool_calls if isinstance(result, ParseResult) else result[1]
    return [(c.function.name, json.loads(c.function.arguments)) for c in found or []]


def tools(name: str, **props: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": props}},
        }
    ]


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "state": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "state", "unit"],
        },
    },
}
DALLAS = {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}
ORLANDO = {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}


def unchanged(parser: str, text: str, tools: Any = None) -> bool:
    result = get_parser(parser).parse_detailed(text, tools)
    return result.content == text and result.tool_calls is None


# =================================================================================================== hermes / qwen

H = get_parser("hermes")
HERMES_ONE = '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n</tool_call>'
HERMES_TWO = HERMES_ONE.replace("\n</tool_call>", "\n</tool_call>\n") + HERMES_ONE.replace(
    "Dallas", "Orlando"
).replace('"TX"', '"FL"')


def test_hermes_vllm_single_call_no_content():
    result = H.parse_detailed(HERMES_ONE)
    assert result.content is None and calls(result) == [("get_current_weather", DALLAS)] and result.ok


def test_hermes_json_without_newlines():
    text = '<tool_call>{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}</tool_call>'
    assert calls(H.parse_detailed(text)) == [("get_current_weather", DALLAS)]


def test_hermes_parallel_calls_sglang_qwen25_shape():
    result = H.parse_detailed(HERMES_TWO)
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]


def test_hermes_content_before_the_call():
    result = H.parse_detailed("Sure! Let me check the weather for you.\n\n" + HERMES_ONE)
    assert result.content == "Sure! Let me check the weather for you."
    assert calls(result) == [("get_current_weather", DALLAS)]


def test_hermes_several_calls_with_text_between():
    # vLLM and SGLang both return only the text before the first call as content; so do we
    text = (
        "First Dallas.\n"
        + HERMES_ONE
        + "\nNow Orlando:\n"
        + HERMES_ONE.replace("Dallas", "Orlando").replace('"TX"', '"FL"')
    )
    result = H.parse_detailed(text)
    assert result.content == "First Dallas."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]


def test_hermes_arguments_as_json_encoded_string():
    text = '<tool_call>\n{"name": "get_current_weather", "arguments": "{\\"city\\": \\"Dallas\\", \\"state\\": \\"TX\\", \\"unit\\": \\"fahrenheit\\"}"}\n</tool_call>'
    assert calls(H.parse_detailed(text)) == [("get_current_weather", DALLAS)]


def test_hermes_missing_arguments_is_a_no_argument_call():
    # SGLang: {} ; vLLM: the whole output falls back to content. A call without arguments is a valid call.
    result = H.parse_detailed('<tool_call>\n{"name": "get_current_time"}\n</tool_call>')
    assert calls(result) == [("get_current_time", {})] and result.ok


def test_hermes_parameters_key_instead_of_arguments():
    text = '<tool_call>\n{"name": "get_current_weather", "parameters": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n</tool_call>'
    assert calls(H.parse_detailed(text)) == [("get_current_weather", DALLAS)]


def test_hermes_2_pro_arguments_before_name_and_end_token():
    # the Hermes-2-Pro model card's order, with the end-of-turn token left in the text
    text = '<tool_call>\n{"arguments": {"symbol": "TSLA"}, "name": "get_stock_fundamentals"}\n</tool_call><|im_end|>'
    assert calls(H.parse_detailed(text)) == [("get_stock_fundamentals", {"symbol": "TSLA"})]


@pytest.mark.parametrize("sep", ["", "\n", "\n\n"])
def test_qwen3_tool_call_right_after_think(sep):
    text = (
        "<think>\nThe user wants the weather in Dallas. I should call get_current_weather.\n</think>"
        + sep
        + HERMES_ONE
    )
    result = get_parser("qwen").parse_detailed(text)
    assert (
        result.content
        == "<think>\nThe user wants the weather in Dallas. I should call get_current_weather.\n</think>"
    )
    assert calls(result) == [("get_current_weather", DALLAS)]


def test_hermes_invalid_json_gives_the_text_back():
    text = '<tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX"\n</tool_call>'
    result = H.parse_detailed(text)
    assert (result.content, result.tool_calls) == (text, None) and result.errors


def test_hermes_unclosed_final_tag_cut_by_max_tokens():
    result = H.parse_detailed(HERMES_ONE[: -len("\n</tool_call>")])
    assert calls(result) == [("get_current_weather", DALLAS)]


def test_hermes_unicode_and_nested_arguments():
    text = '<tool_call>\n{"name": "search", "arguments": {"q": "東京の天気 🌧", "filters": {"days": [1, 2], "opts": {"metric": true}}}}\n</tool_call>'
    assert calls(H.parse_detailed(text)) == [
        ("search", {"q": "東京の天気 🌧", "filters": {"days": [1, 2], "opts": {"metric": True}}})
    ]


def test_hermes_plain_answer_is_unchanged():
    assert unchanged("hermes", "The weather in Dallas is 75°F and sunny.")


def test_longcat_same_shapes():
    text = 'Checking.\n<longcat_tool_call>\n{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}\n</longcat_tool_call>'
    result = get_parser("longcat").parse_detailed(text)
    assert result.content == "Checking." and calls(result) == [("get_current_weather", DALLAS)]


# =================================================================================================== llama

LLAMAS = pytest.mark.parametrize("name", ["llama3_json", "llama4_json"])


@LLAMAS
def test_llama_vllm_no_arguments(name):
    result = get_parser(name).parse_detailed('{"name": "getOpenIncidentsTool", "parameters": {}}')
    assert result.content is None and calls(result) == [("getOpenIncidentsTool", {})]


@LLAMAS
def test_llama_python_tag_forms(name):
    p = get_parser(name)
    one = '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}'
    expected = [("searchTool", {"query": "test query", "limit": 10})]
    for text in (one, "<|python_tag|>" + one, "<|python_tag|>" + one + "<|eom_id|>", one + "<|eot_id|>"):
        result = p.parse_detailed(text)
        assert result.content is None and calls(result) == expected and result.ok, text


@LLAMAS
def test_llama_text_before_python_tag_is_content(name):
    # SGLang splits at <|python_tag|>; the special token is an unambiguous marker, so we do too
    result = get_parser(name).parse_detailed(
        'Let me look that up.<|python_tag|>{"name": "searchTool", "parameters": {"query": "x"}}'
    )
    assert result.content == "Let me look that up." and calls(result) == [("searchTool", {"query": "x"})]


@LLAMAS
def test_llama_arguments_key(name):
    result = get_parser(name).parse_detailed('{"name": "searchTool", "arguments": {"query": "test"}}')
    assert calls(result) == [("searchTool", {"query": "test"})]


@LLAMAS
@pytest.mark.parametrize(
    "lead",
    ["[Note] I will call.", "[1] Source: wiki.\n", '{"thought": "need weather"}\n', "[x](http://a.b) "],
)
def test_llama_text_starting_with_a_bracket_then_a_tagged_call(name, lead):
    text = lead + '<|python_tag|>{"name": "f", "parameters": {"a": 1}}'
    result = get_parser(name).parse_detailed(text)
    assert calls(result) == [("f", {"a": 1})] and result.content == lead.rstrip()


@LLAMAS
@pytest.mark.parametrize("sep", ["; <|python_tag|>", ";<|python_tag|>", "\n<|python_tag|>"])
def test_llama_each_call_with_its_own_python_tag(name, sep):
    text = sep.join(
        ['<|python_tag|>{"name": "a", "parameters": {}}', '{"name": "b", "parameters": {"x": 1}}']
    )
    result = get_parser(name).parse_detailed(text)
    assert calls(result) == [("a", {}), ("b", {"x": 1})] and result.ok and result.content is None


@LLAMAS
@pytest.mark.parametrize("sep", ["; ", " ; ", ";", "\n", ";\n", "\n\n"])
def test_llama_multiple_calls(name, sep):
    text = sep.join(
        [
            '{"name": "searchTool", "parameters": {"query": "test1"}}',
            '{"name": "getOpenIncidentsTool", "parameters": {}}',
            '{"name": "searchTool", "parameters": {"query": "test2"}}',
        ]
    )
    assert calls(get_parser(name).parse_detailed(text)) == [
        ("searchTool", {"query": "test1"}),
        ("getOpenIncidentsTool", {}),
        ("searchTool", {"query": "test2"}),
    ]


@LLAMAS
def test_llama_json_list_of_calls(name):
    text = '[{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}]'
    assert calls(get_parser(name).parse_detailed(text)) == [("a", {"x": 1}), ("b", {})]
    assert unchanged(name, "[1, 2, 3]") and unchanged(name, '[{"name": "a"}]')


@LLAMAS
@pytest.mark.parametrize(
    "text",
    [
        # calls inside prose are read, as vLLM does (see test_parity_vllm.py); these are not calls
        "This is just some text without any tool calls",
        '{"name": "invalidTool", "parameters": {invalid json}',
        '{"answer": 42}',
        '```json\n{"name": "searchTool", "parameters": {}}\n```',
    ],
)
def test_llama_not_calls(name, text):
    assert unchanged(name, text)


@LLAMAS
def test_llama_32_type_function_shape_and_string_parameters(name):
    p = get_parser(name)
    text = '{"type": "function", "name": "get_weather", "parameters": {"location": "Zürich", "opts": {"days": [1, 2]}}}'
    assert calls(p.parse_detailed(text)) == [
        ("get_weather", {"location": "Zürich", "opts": {"days": [1, 2]}})
    ]
    text = '{"name": "get_weather", "parameters": "{\\"location\\": \\"Paris\\"}"}'
    assert calls(p.parse_detailed(text)) == [("get_weather", {"location": "Paris"})]


@LLAMAS
def test_llama_builtin_python_call_is_content_and_reported(name):
    text = '<|python_tag|>brave_search.call(query="current weather in Menlo Park")'
    result = get_parser(name).parse_detailed(text)
    assert (result.content, result.tool_calls) == (text, None) and result.errors


# =================================================================================================== mistral

M = get_parser("mistral")


@pytest.mark.parametrize("space", ["", " ", "\n"])
def test_mistral_pre_v11_list(space):
    text = f'[TOOL_CALLS]{space}[{{"name": "add", "arguments": {{"a": 3.5, "b": 4}}}}]'
    result = M.parse_detailed(text)
    assert result.content is None and calls(result) == [("add", {"a": 3.5, "b": 4})] and result.ok


def test_mistral_pre_v11_list_of_several_with_content():
    text = 'Sure, both.[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}, {"name": "get_current_weather", "arguments": {"city": "Orlando", "state": "FL", "unit": "fahrenheit"}}]'
    result = M.parse_detailed(text)
    assert result.content == "Sure, both."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]


def test_mistral_v11_single_and_repeated():
    result = M.parse_detailed('[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}')
    assert calls(result) == [("add_this_and_that", {"a": 3.5, "b": 4})]
    result = M.parse_detailed('[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}')
    assert calls(result) == [("add", {"a": 3.5, "b": 4}), ("multiply", {"a": 3, "b": 6})]


def test_mistral_args_form_repeated_with_content():
    text = 'Let me check.[TOOL_CALLS]get_current_weather[ARGS]{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}[TOOL_CALLS]get_current_weather[ARGS]{"city": "Orlando", "state": "FL", "unit": "fahrenheit"}'
    result = M.parse_detailed(text)
    assert result.content == "Let me check."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]


def test_mistral_nested_json_and_unicode():
    args = {"city": "東京", "note": "naïve café 🙂", "o": {"x": [1, {"y": None}], "s": "a}b{c"}}
    for text in (
        f"[TOOL_CALLS]f{json.dumps(args, ensure_ascii=False)}",
        f"[TOOL_CALLS]f[ARGS]{json.dumps(args)}",
        f'[TOOL_CALLS] [{{"name": "f", "arguments": {json.dumps(args, ensure_ascii=False)}}}]',
    ):
        assert calls(M.parse_detailed(text)) == [("f", args)], text


def test_mistral_ids_are_nine_alphanumerics_or_the_given_one():
    # Mistral's chat templates reject tool-call ids that are not 9 letters/digits (vLLM generates such ids)
    _, found = M.parse('[TOOL_CALLS]a{}[TOOL_CALLS]b[ARGS]{}[TOOL_CALLS] [{"name": "c", "arguments": {}}]')
    assert all(len(c.id) == 9 and c.id.isalnum() and c.id.isascii() for c in found)
    _, found = M.parse('[TOOL_CALLS]read[CALL_ID]a1B2c3D4e[ARGS]{"path": "/tmp"}')
    assert found[0].id == "a1B2c3D4e"
    _, found = M.parse('[TOOL_CALLS] [{"name": "f", "arguments": {}, "id": "ssTOuH6Ge"}]</s>')
    assert found[0].id == "ssTOuH6Ge"


def test_mistral_plain_text_and_end_token():
    assert unchanged("mistral", "The answer is 7.")
    result = M.parse_detailed('[TOOL_CALLS]add{"a": 1}</s>')
    assert calls(result) == [("add", {"a": 1})] and result.ok


# =================================================================================================== deepseek

TCB, TCE = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CB, CE, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
EOS = "<｜end▁of▁sentence｜>"


def v3_call(name: str, args: dict, fence: bool = True) -> str:
    body = f"```json\n{json.dumps(args)}\n```" if fence else json.dumps(args)
    return f"{CB}function{SEP}{name}\n{body}{CE}"


def test_deepseek_v3_vllm_shape_with_content():
    text = f"I'll check.{TCB}{v3_call('get_current_weather', DALLAS)}{TCE}"
    result = get_parser("deepseek_v3").parse_detailed(text)
    assert (
        result.content == "I'll check." and calls(result) == [("get_current_weather", DALLAS)] and result.ok
    )


@pytest.mark.parametrize("between", ["", "\n"])
def test_deepseek_v3_multiple_calls(between):
    text = (
        TCB
        + v3_call("get_current_weather", DALLAS)
        + between
        + v3_call("get_current_weather", ORLANDO)
        + TCE
        + EOS
    )
    assert calls(get_parser("deepseek_v3").parse_detailed(text)) == [
        ("get_current_weather", DALLAS),
        ("get_current_weather", ORLANDO),
    ]


def test_deepseek_v3_missing_section_end_and_no_fence():
    p = get_parser("deepseek_v3")
    assert calls(p.parse_detailed(TCB + v3_call("f", {"a": 1}))) == [("f", {"a": 1})]
    assert calls(p.parse_detailed(TCB + v3_call("f", {"a": 1}, fence=False) + TCE)) == [("f", {"a": 1})]
    # R1-style: reasoning, then the calls
    text = (
        "<think>\nweather needed\n</think>\n\n"
        + TCB
        + v3_call("f", {}, fence=False)
        + v3_call("g", {"b": [1]})
        + TCE
    )
    result = p.parse_detailed(text)
    assert result.content == "<think>\nweather needed\n</think>" and calls(result) == [
        ("f", {}),
        ("g", {"b": [1]}),
    ]


def test_deepseek_v3_and_v31_read_each_others_call_spelling():
    v31 = f'{TCB}{CB}get_current_weather{SEP}{{"city": "Dallas"}}{CE}{TCE}'
    v3 = f"{TCB}{v3_call('get_current_weather', {'city': 'Dallas'})}{TCE}"
    for name in ("deepseek_v3", "deepseek_v3_1"):
        for text in (v31, v3):
            assert calls(get_parser(name).parse_detailed(text)) == [
                ("get_current_weather", {"city": "Dallas"})
            ]


def test_deepseek_v31_shapes():
    p = get_parser("deepseek_v31")
    one = f"{CB}get_current_weather{SEP}{json.dumps(DALLAS)}{CE}"
    two = f"{CB}get_current_weather{SEP}{json.dumps(ORLANDO)}{CE}"
    result = p.parse_detailed(f"Checking both.{TCB}{one}{two}{TCE}{EOS}")
    assert result.content == "Checking both."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]
    assert calls(p.parse_detailed(TCB + one + two)) == calls(result)  # no final <｜tool▁calls▁end｜>
    args = {"q": "北京 🌧", "nested": {"k": [1, {"z": None}]}, "code": "```py\nx=1\n```"}
    assert calls(
        p.parse_detailed(f"{TCB}{CB}search{SEP}{json.dumps(args, ensure_ascii=False)}{CE}{TCE}")
    ) == [("search", args)]


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v3_1"])
def test_deepseek_plain_text_unchanged(name):
    assert unchanged(name, "Dallas is 75°F.")


# =================================================================================================== kimi

SB, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
KB, KA, KE = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
K = get_parser("kimi_k2")


def test_kimi_vllm_shape_with_spaces_around_markers():
    text = f'I\'ll help you check the weather. {SB} {KB} functions.get_weather:0 {KA} {{"city": "Beijing"}} {KE} {SE}'
    result = K.parse_detailed(text)
    assert result.content == "I'll help you check the weather."
    assert calls(result) == [("get_weather", {"city": "Beijing"})] and result.ok
    assert result.tool_calls[0].id == "functions.get_weather:0"


def test_kimi_multiple_calls_with_newlines_keep_ids():
    text = (
        f'{SB}\n{KB}functions.get_weather:0{KA}{{"city": "Beijing"}}{KE}\n'
        f'{KB}functions.get_weather:1{KA}\n{{"city": "Shanghai"}}\n{KE}\n{SE}'
    )
    result = K.parse_detailed(text)
    assert calls(result) == [("get_weather", {"city": "Beijing"}), ("get_weather", {"city": "Shanghai"})]
    assert [c.id for c in result.tool_calls] == ["functions.get_weather:0", "functions.get_weather:1"]


def test_kimi_names_with_dots_and_dashes():
    # upstream takes split(".")[1] and would call "mcp"; the whole name between "functions." and ":IDX" is kept
    text = f"{SB}{KB}functions.mcp.web-search:2{KA}{{}}{KE}{KB}functions.get-weather:3{KA}{{}}{KE}{SE}"
    result = K.parse_detailed(text)
    assert calls(result) == [("mcp.web-search", {}), ("get-weather", {})]
    assert [c.id for c in result.tool_calls] == ["functions.mcp.web-search:2", "functions.get-weather:3"]


def test_kimi_missing_section_end_singular_section_and_bare_calls():
    one = f'{KB}functions.f:0{KA}{{"a": 1}}{KE}'
    for text in (SB + one, "<|tool_call_section_begin|>" + one, one, SB + one + SE + "<|im_end|>"):
        result = K.parse_detailed("Text. " + text)
        assert result.content == "Text." and calls(result) == [("f", {"a": 1})], text


def test_kimi_call_whose_id_lacks_the_index_is_skipped_and_reported():
    # vLLM's test_extract_tool_calls_invalid_funcall: only functions.NAME:IDX ids are calls (SGLang agrees)
    text = (
        f"I'll help you check the weather. {SB} {KB} functions.invalid_get_weather.0 {KA} "
        f'{{"city": "Beijing"}} {KE} {KB} functions.valid_get_weather:1 {KA} {{"city": "Shanghai"}} {KE} {SE}'
    )
    result = K.parse_detailed(text)
    assert calls(result) == [("valid_get_weather", {"city": "Shanghai"})]
    assert result.content == "I'll help you check the weather."
    assert "functions.NAME:IDX" in result.errors[0] and "invalid_get_weather.0" in result.errors[0]


def test_kimi_plain_text_unchanged():
    assert unchanged("kimi_k2", "Beijing is sunny today.")


# =================================================================================================== glm

GLM_ONE = (
    "<tool_call>get_current_weather\n<arg_key>city</arg_key>\n<arg_value>Dallas</arg_value>\n"
    "<arg_key>state</arg_key>\n<arg_value>TX</arg_value>\n<arg_key>unit</arg_key>\n"
    "<arg_value>fahrenheit</arg_value>\n</tool_call>"
)
GLMS = pytest.mark.parametrize("name", ["glm45", "glm47"])


@GLMS
def test_glm_vllm_shape_with_content_and_several_calls(name):
    text = (
        "I'll check both.\n" + GLM_ONE + "\n" + GLM_ONE.replace("Dallas", "Orlando").replace(">TX<", ">FL<")
    )
    result = get_parser(name).parse_detailed(text, [WEATHER])
    assert result.content == "I'll check both."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)] and result.ok


@GLMS
def test_glm47_compact_shape(name):
    text = "<tool_call>get_current_weather<arg_key>city</arg_key><arg_value>Dallas</arg_value><arg_key>state</arg_key><arg_value>TX</arg_value><arg_key>unit</arg_key><arg_value>fahrenheit</arg_value></tool_call>"
    assert calls(get_parser(name).parse_detailed(text)) == [("get_current_weather", DALLAS)]


@GLMS
def test_glm_value_with_newlines_is_verbatim(name):
    code = "def f():\n    return 1\n"
    text = f"<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n<arg_key>content</arg_key>\n<arg_value>{code}</arg_value>\n</tool_call>"
    assert calls(get_parser(name).parse_detailed(text)) == [("write_file", {"path": "a.py", "content": code})]


@GLMS
def test_glm_values_typed_by_schema(name):
    schema = tools(
        "f",
        n={"type": "integer"},
        x={"type": "number"},
        b={"type": "boolean"},
        o={"type": "object"},
        a={"type": "array"},
        s={"type": "string"},
        opt={"anyOf": [{"type": "string"}, {"type": "null"}]},
    )
    pairs = {
        "n": "42",
        "x": "3.14",
        "b": "true",
        "o": '{"key": "value"}',
        "a": "[1, 2, 3]",
        "s": "42",
        "opt": "null",
    }
    text = (
        "<tool_call>f\n"
        + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs.items())
        + "</tool_call>"
    )
    p = get_parser(name)
    expected = {"n": 42, "x": 3.14, "b": True, "o": {"key": "value"}, "a": [1, 2, 3], "s": "42", "opt": None}
    assert calls(p.parse_detailed(text, schema)) == [("f", expected)]
    # without a schema a value that is valid JSON is decoded, as vLLM and SGLang do for GLM (docs/parsers.md)
    untyped = {**expected, "s": 42}
    assert calls(p.parse_detailed(text)) == [("f", untyped)]
    # ... and any other text stays a string, verbatim
    odd = text.replace(">3.14<", ">2024-06-27<").replace(">true<", "> Beijing \n<")
    assert calls(p.parse_detailed(odd)) == [("f", {**untyped, "x": "2024-06-27", "b": " Beijing \n"})]


@GLMS
@pytest.mark.parametrize("body", ["get_current_time", "get_current_time\n", "\nget_current_time\n"])
def test_glm_no_argument_calls(name, body):
    result = get_parser(name).parse_detailed(f"Time?\n<tool_call>{body}</tool_call>")
    if name == "glm45" and not body.endswith("\n"):  # SGLang's GLM-4.5 reader needs the newline; reported
        assert result.tool_calls is None and "writes a newline" in result.errors[0]
        return
    assert result.content == "Time?" and calls(result) == [("get_current_time", {})]


@GLMS
def test_glm_text_after_the_call_is_not_content(name):
    result = get_parser(name).parse_detailed(GLM_ONE + "\nWaiting for the result.", [WEATHER])
    assert result.content is None and calls(result) == [("get_current_weather", DALLAS)]


@GLMS
def test_glm_plain_text_unchanged(name):
    assert unchanged(name, "Dallas is sunny.")


# =================================================================================================== qwen3_coder

Q = get_parser("qwen3_coder")
QWEN_ONE = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
    "<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
)
QWEN_BARE = QWEN_ONE.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")


@pytest.mark.parametrize("schema", [None, [WEATHER]])
def test_qwen3_coder_vllm_shape(schema):
    result = Q.parse_detailed("I'll help you check the weather.\n" + QWEN_ONE, schema)
    assert result.content == "I'll help you check the weather."
    assert calls(result) == [("get_current_weather", DALLAS)] and result.ok


@pytest.mark.parametrize("schema", [None, [WEATHER]])
def test_qwen3_coder_bare_function_without_tool_call_wrapper(schema):
    # vLLM falls back to the whole output when there is no <tool_call>; real Qwen3-Coder emits this
    result = Q.parse_detailed(QWEN_BARE, schema)
    assert result.content is None and calls(result) == [("get_current_weather", DALLAS)] and result.ok
    result = Q.parse_detailed(
        "Checking.\n" + QWEN_BARE + "\n" + QWEN_BARE.replace("Dallas", "Orlando").replace("\nTX\n", "\nFL\n"),
        schema,
    )
    assert result.content == "Checking."
    assert calls(result) == [("get_current_weather", DALLAS), ("get_current_weather", ORLANDO)]
    # wrapped and bare mixed
    result = Q.parse_detailed(QWEN_ONE + "\n" + QWEN_BARE, schema)
    assert calls(result) == [("get_current_weather", DALLAS)] * 2


@pytest.mark.parametrize("schema", [None, [WEATHER]])
def test_qwen3_coder_missing_final_parameter_close(schema):
    text = QWEN_ONE.replace("fahrenheit\n</parameter>\n", "fahrenheit\n")
    result = Q.parse_detailed(text, schema)
    assert calls(result) == [("get_current_weather", DALLAS)]
    assert len(result.errors) == 1 and "'unit' should end with </parameter>" in result.errors[0]
    # also bare, and followed by another call: the first call does not swallow the second
    two = (
        text.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
        + "\n"
        + QWEN_ONE.replace("Dallas", "Orlando").replace("\nTX\n", "\nFL\n")
    )
    assert calls(Q.parse_detailed(two, schema)) == [
        ("get_current_weather", DALLAS),
        ("get_current_weather", ORLANDO),
    ]


@pytest.mark.parametrize("schema", [None, [WEATHER]])
def test_qwen3_coder_missing_middle_parameter_close(schema):
    # vLLM's test_extract_tool_calls_missing_closing_parameter_tag
    text = QWEN_ONE.replace("Dallas\n</parameter>\n", "Dallas\n")
    result = Q.parse_detailed("Let me check the weather for you:\n" + text, schema)
    assert result.content == "Let me check the weather for you:"
    assert calls(result) == [("get_current_weather", DALLAS)]
    assert "'city' should end with </parameter>" in result.errors[0]


def test_qwen3_coder_values_on_the_same_line_as_the_tag():
    text = "<tool_call>\n<function=get_current_weather>\n<parameter=city>Dallas</parameter>\n<parameter=state>TX\n</parameter>\n<parameter=unit>\nfahrenheit</parameter>\n</function>\n</tool_call>"
    assert calls(Q.parse_detailed(text, [WEATHER])) == [("get_current_weather", DALLAS)]


def test_qwen3_coder_content_after_the_call_is_not_content():
    result = Q.parse_detailed(QWEN_ONE + "\nI have requested the weather; waiting.")
    assert result.content is None and calls(result) == [("get_current_weather", DALLAS)]
    result = Q.parse_detailed(QWEN_BARE + "\nDone.")
    assert result.content is None and calls(result) == [("get_current_weather", DALLAS)]


def test_qwen3_coder_vllm_type_conversion():
    schema = tools(
        "test_types",
        int_param={"type": "integer"},
        float_param={"type": "number"},
        bool_param={"type": "boolean"},
        str_param={"type": "string"},
        obj_param={"type": "object"},
        array_param={"type": "array"},
        null_param={"type": "null"},
    )
    values = {
        "int_param": "42",
        "float_param": "3.14",
        "bool_param": "true",
        "str_param": "hello world",
        "obj_param": '{"key": "value"}',
        "array_param": "[1, 2, 3]",
        "null_param": "null",
    }
    text = (
        "<tool_call>\n<function=test_types>\n"
        + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values.items())
        + "</function>\n</tool_call>"
    )
    assert calls(Q.parse_detailed(text, schema)) == [
        (
            "test_types",
            {
                "int_param": 42,
                "float_param": 3.14,
                "bool_param": True,
                "str_param": "hello world",
                "obj_param": {"key": "value"},
                "array_param": [1, 2, 3],
                "null_param": None,
            },
        )
    ]


def test_qwen3_coder_multiline_code_value_and_no_parameter_call():
    code = "def f(x):\n    if x < 2:\n        return x\n\n    return f(x - 1)\n"
    text = (
        f"<tool_call>\n<function=write_file>\n<parameter=path>\nf.py\n</parameter>\n<parameter=content>\n{code}\n</parameter>\n"
        "</function>\n</tool_call>\n<tool_call>\n<function=list_files>\n</function>\n</tool_call>"
    )
    assert calls(Q.parse_detailed(text)) == [
        ("write_file", {"path": "f.py", "content": code}),
        ("list_files", {}),
    ]


def test_qwen3_coder_cut_off_output_keeps_complete_calls():
    result = Q.parse_detailed(
        QWEN_ONE + "\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nOrl"
    )
    assert calls(result) == [("get_current_weather", DALLAS)] and "#2" in result.errors[0]
    # </function> present, </tool_call> missing (the stop token ended the output)
    assert calls(Q.parse_detailed(QWEN_ONE.removesuffix("\n</tool_call>"))) == [
        ("get_current_weather", DALLAS)
    ]


def test_qwen3_coder_plain_text_and_fenced_example_unchanged():
    assert unchanged("qwen3_coder", "Dallas is sunny.")
    assert unchanged("qwen3_coder", "The format is:\n```\n" + QWEN_BARE + "\n```\nThat's it.")


# ====================================================================== mentions of the tag before a real call


@pytest.mark.parametrize(
    ("name", "text", "content"),
    [
        (
            "glm45",
            "I will emit a <tool_call> block now.\n<tool_call>real\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n"
            "</tool_call>",
            "I will emit a <tool_call> block now.",
        ),
        (
            "glm47",
            "Calling <tool_call> now: <tool_call>real<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
            "Calling <tool_call> now:",
        ),
        (
            "qwen3_coder",
            "I will emit a <tool_call> block now.\n<tool_call>\n<function=real>\n<parameter=a>\n1\n</parameter>\n"
            "</function>\n</tool_call>",
            "I will emit a <tool_call> block now.",
        ),
        (
            "qwen3_coder",
            "Use the <function=NAME> syntax.\n<tool_call>\n<function=real>\n<parameter=a>\n1\n</parameter>\n"
            "</function>\n</tool_call>",
            "Use the",
        ),
        (
            "qwen3_coder",
            "Use the <function=NAME> syntax.\n<function=real>\n<parameter=a>\n1\n</parameter>\n</function>",
            "Use the",
        ),
    ],
)
def test_a_tag_mentioned_in_prose_does_not_swallow_the_real_call_after_it(name, text, content):
    result = get_parser(name).parse_detailed(text)
    assert calls(result) == [("real", {"a": 1 if name.startswith("glm") else "1"})]
    assert result.content == content


@pytest.mark.parametrize("name", ["glm45", "glm47", "qwen3_coder"])
def test_a_lone_mention_of_the_tag_leaves_the_text_unchanged(name):
    text = "Just a mention of <tool_call> here."
    result = get_parser(name).parse_detailed(text)
    assert result.content == text and result.tool_calls is None


@pytest.mark.parametrize("sep", ["\n", "", " ", "\n\n"])
def test_hermes_several_json_objects_in_one_tag_are_several_calls(sep):
    text = f'<tool_call>\n{{"name": "a", "arguments": {{"x": 1}}}}{sep}{{"name": "b", "arguments": {{"y": 2}}}}\n</tool_call>'
    result = get_parser("hermes").parse_detailed(text)
    assert calls(result) == [("a", {"x": 1}), ("b", {"y": 2})] and result.ok


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v3_1"])
@pytest.mark.parametrize("cut", ["", "`", "``", "```"])
def test_deepseek_v3_call_cut_inside_its_closing_fence_is_kept(name, cut):
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"location": "Tokyo"}\n' + cut
    )
    assert calls(get_parser(name).parse_detailed(text)) == [("get_weather", {"location": "Tokyo"})]


def test_deepseek_v3_with_crlf_line_endings():
    text = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\r\n```json\r\n"
        '{"location": "Tokyo"}\r\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    assert calls(get_parser("deepseek_v3").parse_detailed(text)) == [("get_weather", {"location": "Tokyo"})]


def test_kimi_call_after_the_section_end_without_a_new_section_is_read():
    text = f'{SB}{KB}functions.a:0{KA}{{"x": 1}}{KE}{SE}{KB}functions.b:1{KA}{{}}{KE}'
    assert calls(K.parse_detailed(text)) == [("a", {"x": 1}), ("b", {})]


@pytest.mark.parametrize("name", ["deepseek_v3", "deepseek_v3_1"])
def test_deepseek_call_after_the_section_end_without_a_new_section_is_read(name):
    parser = get_parser(name)
    one = parser.render(None, [("a", {"x": 1})])
    two = parser.render(None, [("b", {})])
    inner = two.split("<｜tool▁calls▁begin｜>", 1)[1].rsplit("<｜tool▁calls▁end｜>", 1)[0]
    assert calls(parser.parse_detailed(one + inner)) == [("a", {"x": 1}), ("b", {})]


def test_deepseek_v31_arguments_given_as_a_json_encoded_string_are_decoded_once():
    text = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>"{\\"x\\": 1}"<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    assert calls(get_parser("deepseek_v3_1").parse_detailed(text)) == [("a", {"x": 1})]
