"""Parity with SGLang's own function-call parser tests (test/srt/test_function_call_parser.py): the behaviour each
pins, in cases of our own. Where we follow vLLM instead, the test says so (see docs/parsers.md)."""

from __future__ import annotations

import json

import pytest

from hermes_envs.parsers import get_parser


def calls(result):
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls or []]


def tool(name, **props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


WEATHER = [tool("get_weather", city={"type": "string"}, date={"type": "string"}), tool("get_time")]
TODOS = [tool("todo_write", todos={"type": "array", "items": {"type": "object"}})]
GLMS = pytest.mark.parametrize("name", ["glm45", "glm47"])


# =================================================================================================== glm (SGLang)


@GLMS
def test_glm_single_and_several_calls_with_normal_text_empty(name):
    one = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{c}</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2024-06-27</arg_value>\n</tool_call>"
    result = get_parser(name).parse_detailed(one.format(c="Beijing") + one.format(c="Shanghai"), WEATHER)
    assert calls(result) == [
        ("get_weather", {"city": "Beijing", "date": "2024-06-27"}),
        ("get_weather", {"city": "Shanghai", "date": "2024-06-27"}),
    ]
    assert result.content is None and result.ok


@GLMS
def test_glm_raw_form_with_literal_backslash_n_separators(name):
    text = r"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>杭州</arg_value>\n</tool_call>"
    assert calls(get_parser(name).parse_detailed(text, WEATHER)) == [("get_weather", {"city": "杭州"})]
    no_args = r"<tool_call>get_time\n</tool_call>"
    assert calls(get_parser(name).parse_detailed(no_args, WEATHER)) == [("get_time", {})]


@GLMS
@pytest.mark.parametrize("raw", [False, True])
def test_glm_array_of_objects_written_as_escaped_json(name, raw):
    # SGLang's GLM-4.6 output: the JSON inside <arg_value> escaped as if inside a string, with either separator
    sep = r"\n" if raw else "\n"
    value = r"[{\"id\": \"1\", \"task\": \"Check C:\\\\Users\\\\x.txt\", \"status\": \"pending\"}, {\"id\": \"2\", \"task\": \"Print \\\\n here\", \"status\": \"done\"}]"
    text = (
        f"<tool_call>todo_write{sep}<arg_key>todos</arg_key>{sep}<arg_value>{value}</arg_value>\n</tool_call>"
    )
    ((fn, args),) = calls(get_parser(name).parse_detailed(text, TODOS))
    assert fn == "todo_write" and [t["id"] for t in args["todos"]] == ["1", "2"]
    assert args["todos"][0]["task"] == r"Check C:\Users\x.txt"  # one level of escapes undone, not two
    assert args["todos"][1]["task"] == r"Print \n here"  # a literal backslash-n stays literal


@GLMS
def test_glm_array_of_objects_as_plain_json(name):
    text = '<tool_call>todo_write\n<arg_key>todos</arg_key>\n<arg_value>[{"id": "1", "done": false}]</arg_value>\n</tool_call>'
    assert calls(get_parser(name).parse_detailed(text, TODOS)) == [
        ("todo_write", {"todos": [{"id": "1", "done": False}]})
    ]


@GLMS
@pytest.mark.parametrize(("raw", "expected"), [('"5"', 5), ("5", 5), ('"5.5"', 5.5)])
def test_glm_quoted_numbers_are_typed_by_the_schema(name, raw, expected):
    tools = [tool("f", n={"type": "number"}, s={"type": "string"})]
    text = f"<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>{raw}</arg_value>\n<arg_key>s</arg_key>\n<arg_value>{raw}</arg_value>\n</tool_call>"
    assert calls(get_parser(name).parse_detailed(text, tools)) == [("f", {"n": expected, "s": raw})]


def test_glm45_rejects_a_compact_call_without_arguments_as_sglang_does():
    # SGLang's GLM-4.5 reader wants a newline after the name; vLLM's GLM-4.7 reader does not (test_parity_vllm)
    result = get_parser("glm45").parse_detailed("<tool_call>get_time</tool_call>", WEATHER)
    assert result.tool_calls is None and "writes a newline" in result.errors[0]
    assert calls(get_parser("glm45").parse_detailed("<tool_call>get_time\n</tool_call>")) == [
        ("get_time", {})
    ]


@GLMS
def test_glm_call_to_an_unknown_function_is_kept_unlike_sglang(name):
    # SGLang drops it; the loop answers it with an unknown-tool error, which is what a reward should see
    text = "<tool_call>invalid_func\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>"
    assert calls(get_parser(name).parse_detailed(text, WEATHER)) == [("invalid_func", {"city": "Beijing"})]


@GLMS
def test_glm_text_before_is_content_text_around_ends_is_dropped(name):
    text = "准备查询<tool_call>get_time\n</tool_call><tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>杭州</arg_value>\n</tool_call>查询已提交"
    result = get_parser(name).parse_detailed(text, WEATHER)
    assert (
        calls(result) == [("get_time", {}), ("get_weather", {"city": "杭州"})]
        and result.content == "准备查询"
    )


# =================================================================================================== qwen25 / hermes


def test_qwen25_parallel_calls_each_in_its_tag():
    text = (
        "I'll check both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
    )
    result = get_parser("qwen").parse_detailed(text, WEATHER)
    assert calls(result) == [("get_weather", {"city": "Tokyo"}), ("get_time", {})]
    assert result.content == "I'll check both."


def test_hermes_string_arguments_kept_as_sglang_does():
    result = get_parser("hermes").parse_detailed('<tool_call>{"name": "f", "arguments": "x"}</tool_call>')
    assert result.tool_calls[0].function.arguments == '"x"'


# =================================================================================================== llama32


def test_llama32_text_then_python_tag_then_calls():
    text = 'Let me search.<|python_tag|>{"name": "search", "parameters": {"query": "x"}}; {"name": "get_time", "parameters": {}}'
    result = get_parser("llama3_json").parse_detailed(text)
    assert (
        calls(result) == [("search", {"query": "x"}), ("get_time", {})] and result.content == "Let me search."
    )


def test_llama32_json_in_prose_is_a_call_unlike_sglang():
    # SGLang only reads JSON at the start or after <|python_tag|>; we follow vLLM (test_parity_vllm)
    result = get_parser("llama3_json").parse_detailed('Result: {"name": "search", "parameters": {}}')
    assert calls(result) == [("search", {})]


# =================================================================================================== mistral


def test_mistral_list_after_content_and_several_calls():
    text = 'Let me look.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]'
    result = get_parser("mistral").parse_detailed(text)
    assert (
        calls(result) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
        and result.content == "Let me look."
    )


# =================================================================================================== qwen3_coder


def test_qwen3_coder_typed_parameters_and_multiline_string():
    tools = [tool("run", cmd={"type": "string"}, timeout={"type": "integer"}, env={"type": "object"})]
    text = (
        "<tool_call>\n<function=run>\n<parameter=cmd>\nline 1\nline 2\n</parameter>\n"
        '<parameter=timeout>\n30\n</parameter>\n<parameter=env>\n{"A": "1"}\n</parameter>\n</function>\n</tool_call>'
    )
    assert calls(get_parser("qwen3_coder").parse_detailed(text, tools)) == [
        ("run", {"cmd": "line 1\nline 2", "timeout": 30, "env": {"A": "1"}})
    ]


# =================================================================================================== deepseek / kimi


def test_deepseek_v3_fenced_json_and_kimi_ids():
    ds = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    )
    assert calls(get_parser("deepseek_v3").parse_detailed(ds)) == [("get_weather", {"city": "Tokyo"})]
    kimi = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Tokyo"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    result = get_parser("kimi_k2").parse_detailed(kimi)
    assert (
        calls(result) == [("get_weather", {"city": "Tokyo"})]
        and result.tool_calls[0].id == "functions.get_weather:0"
    )
