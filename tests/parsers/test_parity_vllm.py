"""Parity with vLLM's own tool-parser tests: the behaviour each of its tests pins, in cases of our own.

Each test names the behaviour class (issue 15); where SGLang disagrees and we follow SGLang instead, the test says
so and docs/parsers.md ("Where vLLM and SGLang disagree") gives the rule.
"""

from __future__ import annotations

import json

import pytest

from hermes_envs.parsers import ParserArgumentError, get_parser


def calls(result):
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls or []]


def tool(name, **props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


# =================================================================================================== hermes


def test_hermes_string_arguments_are_kept_as_that_string():
    result = get_parser("hermes").parse_detailed(
        '<tool_call>{"name": "echo", "arguments": "say hi"}</tool_call>'
    )
    assert [c.function.arguments for c in result.tool_calls] == ['"say hi"']  # vLLM: json.dumps of the value
    assert result.content is None and "kept as a JSON string" in result.errors[0]


def test_hermes_json_encoded_string_arguments_are_decoded_once():
    text = '<tool_call>{"name": "f", "arguments": "{\\"x\\": 1}"}</tool_call>'
    assert calls(get_parser("hermes").parse_detailed(text)) == [("f", {"x": 1})]


def test_hermes_call_after_reasoning_in_chinese_keeps_the_arguments_verbatim():
    text = '好的，我来查一下。\n</think>\n\n<tool_call>\n{"name": "internet_search", "arguments": {"question": "燃气轮机 参数"}}\n</tool_call>\n\n '
    result = get_parser("hermes").parse_detailed(text)
    assert calls(result) == [("internet_search", {"question": "燃气轮机 参数"})]
    assert json.loads(result.tool_calls[0].function.arguments)["question"] == "燃气轮机 参数"


# =================================================================================================== mistral

M = get_parser("mistral")


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS][{"name": "add", "arguments": {"a": 3.5, "b": 4}}]',
        '[TOOL_CALLS]  [ {"name":"add" , "arguments" : {"a": 3.5, "b": 4} } ]',
        '[TOOL_CALLS] [{"arguments": {"a": 3.5, "b": 4}, "name": "add"}]',
        '[TOOL_CALLS]add{"a": 3.5, "b": 4}',
    ],
)
def test_mistral_every_spelling_of_one_call(text):
    result = M.parse_detailed(text)
    assert calls(result) == [("add", {"a": 3.5, "b": 4})] and result.content is None
    assert len(result.tool_calls[0].id) == 9


def test_mistral_argument_named_name_is_not_the_function_name():
    result = M.parse_detailed('[TOOL_CALLS] [{"arguments": {"name": "John Doe"}, "name": "get_age"}]')
    assert calls(result) == [("get_age", {"name": "John Doe"})]


def test_mistral_pre_v11_junk_before_the_list_is_skipped_as_vllm_does():
    text = 'Checking.[TOOL_CALLS] calls: [{"name": "add", "arguments": {"a": 1}}, {"name": "sub", "arguments": {}}]'
    result = M.parse_detailed(text)
    assert calls(result) == [("add", {"a": 1}), ("sub", {})]
    assert result.content == "Checking." and "ignored" in result.errors[0]


def test_mistral_unreadable_payload_becomes_the_content_without_the_token():
    result = M.parse_detailed("[TOOL_CALLS] I cannot call a tool for this. ")
    assert result.tool_calls is None
    assert result.content == "I cannot call a tool for this."  # vLLM: the text with the token removed
    assert result.errors  # and we say why no call was read


@pytest.mark.parametrize(
    "text", ["[TOOL_CALLS]get_time", "[TOOL_CALLS]get_time</s>", "[TOOL_CALLS]get_time\n"]
)
def test_mistral_call_without_arguments(text):
    result = M.parse_detailed(text)
    assert calls(result) == [("get_time", {})] and result.ok


def test_mistral_v11_calls_without_and_with_arguments_in_a_row():
    result = M.parse_detailed('[TOOL_CALLS]get_time[TOOL_CALLS]add{"a": 1}')
    assert calls(result) == [("get_time", {}), ("add", {"a": 1})]


# =================================================================================================== llama3_json

L = get_parser("llama3_json")


@pytest.mark.parametrize("sep", ["; ", " ; ", ";"])
def test_llama_semicolon_separated_calls_inside_prose(sep):
    text = (
        "Here are the results: "
        + sep.join(
            [
                '{"name": "searchTool", "parameters": {"query": "test1"}}',
                '{"name": "getOpenIncidentsTool", "parameters": {}}',
                '{"name": "searchTool", "parameters": {"query": "test2"}}',
            ]
        )
        + " Would you like to know more?"
    )
    result = L.parse_detailed(text)
    assert calls(result) == [
        ("searchTool", {"query": "test1"}),
        ("getOpenIncidentsTool", {}),
        ("searchTool", {"query": "test2"}),
    ]
    assert result.content == "Here are the results:"  # vLLM drops it; the prose before the calls is kept here


def test_llama_call_after_a_prose_prefix_leaves_the_prefix_as_content():
    result = L.parse_detailed('Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}}')
    assert calls(result) == [("getOpenIncidentsTool", {})] and result.content == "Here is the result:"


def test_llama_valid_call_after_an_invalid_json_object():
    text = '{"name": "broken", "parameters": {oops}} {"name": "searchTool", "parameters": {"query": "x"}}'
    result = L.parse_detailed(text)
    assert calls(result) == [("searchTool", {"query": "x"})]
    assert result.content is None and "should be valid JSON" in result.errors[0]


def test_llama_invalid_json_alone_gives_the_text_back():
    text = '{"name": "invalidTool", "parameters": {invalid json}'
    result = L.parse_detailed(text)
    assert (result.content, result.tool_calls) == (text, None) and result.errors


def test_llama_deep_nesting_quotes_and_brackets_in_strings():
    text = (
        '{"name": "t", "parameters": {"q": "test {value} [complex]", "n": {"inner": "more {brackets}"}, '
        '"l1": {"l2": {"l3": {"l4": {"v": "deep"}}}}, "s": "He said \\"Hello {world}\\""}}'
    )
    ((name, args),) = calls(L.parse_detailed(text))
    assert args["q"] == "test {value} [complex]" and args["n"]["inner"] == "more {brackets}"
    assert args["l1"]["l2"]["l3"]["l4"]["v"] == "deep" and args["s"] == 'He said "Hello {world}"'


def test_llama_objects_that_are_not_calls_and_their_insides_stay_content():
    text = 'The config is {"name": "prod", "settings": {"name": "x", "parameters": {}}}.'
    assert (
        L.parse_detailed(text).tool_calls is None
    )  # "name" without parameters: not a call, nor what it holds


# =================================================================================================== qwen3_coder

Q = get_parser("qwen3_coder")


def qcall(name, **params):
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


@pytest.mark.parametrize(
    ("declared", "raw", "expected"),
    [
        ("float", "5", 5),
        ("float", "2.5", 2.5),
        ("double", "1e3", 1000.0),
        ("int", "42", 42),
        ("int64", "-7", -7),
        ("bool", "True", True),
        ("boolean", "false", False),
        ("str", "42", "42"),
        ("dict", '{"a": 1}', {"a": 1}),
        ("list", "[1, 2]", [1, 2]),
        ("number", "3.0", 3.0),
    ],
)
def test_qwen3_coder_vllm_type_names(declared, raw, expected):
    tools = [tool("f", x={"type": declared})]
    assert calls(Q.parse_detailed(qcall("f", x=raw), tools)) == [("f", {"x": expected})]


@pytest.mark.parametrize(
    "raw",
    ['{"city": "Paris", "days": [1, 2], "ok": true}', "{'city': 'Paris', 'days': (1, 2), 'ok': True}"],
)
def test_qwen3_coder_object_parameter_as_json_or_python_literal(raw):
    tools = [tool("f", opts={"type": "object"})]
    result = Q.parse_detailed(qcall("f", opts=raw), tools)
    assert calls(result) == [("f", {"opts": {"city": "Paris", "days": [1, 2], "ok": True}})] and result.ok


def test_qwen3_coder_phantom_call_of_an_unrendered_template_is_rejected_the_real_one_kept():
    text = (
        "<tool_call>\n<function={{ tc.name }}>\n<parameter={{ k }}>\n{{ v }}\n</parameter>\n</function>\n</tool_call>\n"
        + qcall("get_weather", city="Paris")
    )
    result = Q.parse_detailed(text, [tool("get_weather", city={"type": "string"})])
    assert calls(result) == [("get_weather", {"city": "Paris"})]
    assert "unrendered chat-template placeholder" in result.errors[0]


def test_qwen3_coder_undeclared_parameter_stays_a_string():
    tools = [tool("f", x={"type": "integer"})]
    assert calls(Q.parse_detailed(qcall("f", x="1", y="2"), tools)) == [("f", {"x": 1, "y": "2"})]


# =================================================================================================== glm47 (vLLM)

G47 = get_parser("glm47")


def test_glm47_call_without_separator_or_arguments_is_read_as_vllm_does():
    result = G47.parse_detailed("Checking the time.<tool_call>get_time</tool_call>")
    assert calls(result) == [("get_time", {})] and result.content == "Checking the time." and result.ok


@pytest.mark.parametrize("name", ["glm45", "glm47"])
def test_glm_call_after_think_with_a_schema_is_not_glued(name):
    p = get_parser(name)
    nl = "\n" if name == "glm45" else ""
    text = (
        "<think>The user wants the weather; I will call the tool.</think>"
        f"<tool_call>get_weather{nl}<arg_key>city</arg_key>{nl}<arg_value>Beijing</arg_value>{nl}"
        f"<arg_key>date</arg_key>{nl}<arg_value>2024-06-27</arg_value>{nl}</tool_call>"
    )
    for tools in (
        None,
        [tool("get_weather", city={"type": "string"})],
        [tool("other", x={"type": "string"})],
    ):
        result = p.parse_detailed(text, tools)
        assert calls(result) == [("get_weather", {"city": "Beijing", "date": "2024-06-27"})], tools


# =================================================================================================== arguments


@pytest.mark.parametrize(
    "name", ["glm45", "glm47", "qwen3_coder", "hermes", "deepseek_v4", "custom_xml", "auto"]
)
@pytest.mark.parametrize("bad", [5, "tools", {"type": "function"}, b"[]"])
def test_a_bad_tools_argument_is_a_clear_type_error_not_a_lost_call(name, bad):
    with pytest.raises(TypeError, match="should be None or a list of tool schemas") as info:
        get_parser(name).parse("<tool_call>get_time\n</tool_call>", tools=bad)
    assert isinstance(info.value, ParserArgumentError)


def test_a_text_that_is_not_a_string_is_a_clear_type_error():
    with pytest.raises(ParserArgumentError, match="should be a str"):
        get_parser("hermes").parse(b"<tool_call>{}</tool_call>")
