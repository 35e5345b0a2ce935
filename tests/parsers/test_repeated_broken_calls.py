"""A looping model's repeated broken call is counted in bulk: the result must be exactly what reading each gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_envs.parsers.json_tagged as json_tagged
import hermes_envs.parsers.llama as llama
import hermes_envs.parsers.mistral as mistral
import hermes_envs.parsers.xml_params as xml_params
from hermes_envs.parsers import get_parser

PIECES = [
    "<tool_call>",
    "</tool_call>",
    "{",
    "}",
    '"',
    '"name"',
    ":",
    ",",
    '"f"',
    "[",
    "]",
    "\n",
    " ",
    "x",
    "`",
    "1",
]
UNIT = st.lists(st.sampled_from([*PIECES, '"arguments"', "{}"]), min_size=1, max_size=12).map("".join)


def outcome(result):
    calls = [(c.function.name, c.function.arguments) for c in result.tool_calls or []]
    return result.content, calls, result.errors


@pytest.mark.parametrize("name", ["hermes", "longcat"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pre=UNIT, unit=UNIT, copies=st.integers(55, 90), post=UNIT)
def test_bulk_counting_gives_what_reading_each_copy_gives(name, pre, unit, copies, post):
    tag = "<longcat_tool_call>" if name == "longcat" else "<tool_call>"
    text = pre + (tag + unit.replace("<tool_call>", tag)) * copies + post
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    original = json_tagged._CONTEXT_MARKERS
    json_tagged._CONTEXT_MARKERS = ("",)  # "" is in every text: turns the bulk counting off
    try:
        slow = outcome(parser.parse_detailed(text))
    finally:
        json_tagged._CONTEXT_MARKERS = original
    assert fast == slow


def test_a_long_run_of_the_same_broken_call_is_reported_and_counted():
    text = (
        "Start. "
        + '<tool_call>{"name": "f", "arguments": {"a": 1' * 5000
        + '<tool_call>{"name": "g", "arguments": {}}'
    )
    result = get_parser("hermes").parse_detailed(text)
    assert [c.function.name for c in result.tool_calls] == ["g"] and result.content == "Start."
    assert len(result.errors) == 51 and result.errors[-1].startswith("4950 more problems")


@pytest.mark.parametrize(
    ("name", "module", "tag"),
    [
        ("llama3_json", llama, ""),
        ("llama3_json", llama, "<|python_tag|>"),
        ("mistral", mistral, "[TOOL_CALLS]"),
    ],
)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pre=UNIT, unit=UNIT, copies=st.integers(55, 90), post=UNIT)
def test_bulk_counting_in_llama_and_mistral_gives_what_reading_each_copy_gives(
    name, module, tag, pre, unit, copies, post
):
    text = pre + (tag + unit) * copies + post
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    original = module.CONTEXT_MARKERS
    module.CONTEXT_MARKERS = ("",)  # "" is in every text: turns the bulk counting off
    try:
        slow = outcome(parser.parse_detailed(text))
    finally:
        module.CONTEXT_MARKERS = original
    assert fast == slow  # (call ids are random: outcome compares names and arguments)


@pytest.mark.parametrize(
    ("name", "unit"), [("llama3_json", '{"name" "f"} '), ("mistral", '[TOOL_CALLS] [{"')]
)
def test_a_long_run_of_a_broken_llama_or_mistral_call_is_counted(name, unit):
    result = get_parser(name).parse_detailed(unit * 3000)
    assert result.tool_calls is None
    assert len(result.errors) == 51 and result.errors[-1].endswith(
        "more problems of the same kind were not listed."
    )


XML_PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "<function=",
    "<parameter=k>",
    "</parameter>",
    "</function>",
    "<arg_key>k</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "\n",
    "\\n",
    "f",
    "write_file",
    "x",
    "{",
    "}",
    ">",
    "<",
    " ",
    "`",
    "{{ tc.name }}",
]
XML_UNIT = st.lists(st.sampled_from(XML_PIECES), min_size=1, max_size=10).map("".join)


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "glm47"])
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pre=XML_UNIT,
    unit=XML_UNIT,
    copies=st.integers(55, 90),
    post=XML_UNIT,
    start=st.sampled_from(["<tool_call>", "<function="]),
)
def test_bulk_counting_in_the_xml_formats_gives_what_reading_each_copy_gives(
    name, pre, unit, copies, post, start
):
    text = pre + (start + unit) * copies + post
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    original = xml_params.CONTEXT_MARKERS
    xml_params.CONTEXT_MARKERS = ("",)  # "" is in every text: turns the bulk counting off
    try:
        slow = outcome(parser.parse_detailed(text))
    finally:
        xml_params.CONTEXT_MARKERS = original
    assert fast == slow


@pytest.mark.parametrize(
    ("name", "unit"),
    [("qwen3_coder", "<tool_call>\n<function=writ"), ("glm45", "<tool_call>write_file\n<arg_key>")],
)
def test_a_long_run_of_a_broken_xml_call_is_counted(name, unit):
    result = get_parser(name).parse_detailed(unit * 3000)
    assert result.tool_calls is None
    # every copy is counted (the last one, cut by the end of the text, is one problem of another kind)
    assert len(result.errors) == 51 and int(result.errors[-1].split()[0]) + 50 >= 2999
