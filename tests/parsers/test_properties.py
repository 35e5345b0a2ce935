"""Properties every format must have: round trip, never raise, plain text unchanged, content preserved."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_envs.parsers import MistralParser, get_parser, list_parsers
from hermes_envs.testing.strategies import (
    format_text,
    marker_salted_text,
    rendered_outputs,
    schema_for_calls,
    tool_calls,
    tool_schemas,
)


def calls_of(result):
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls or []]


ALL = list_parsers()
FORMATS = [
    n for n in ALL if n not in ("qwen", "deepseek_v31", "llama4_json", "deepseek_dsml", "deepseek_v32")
]  # one per class; aliases below
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MARKERS = [
    "<tool_call>",
    "<longcat_tool_call>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
]


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip(name, data):
    out = data.draw(rendered_outputs(name))
    parser = get_parser(name)
    result = parser.parse_detailed(out.text, out.tools)
    assert result.errors == []
    assert result.content == out.content
    assert calls_of(result) == out.calls
    for call in result.tool_calls:
        assert call.type == "function"
        if name == "kimi_k2":
            assert call.id.startswith("functions.")
        elif name == "mistral":  # Mistral's templates require 9 letters/digits
            assert len(call.id) == 9 and call.id.isalnum() and call.id.isascii()
        else:
            assert call.id.startswith("call_")
    # render takes the parsed OpenAI objects and their dict form alike
    as_dicts = [c.model_dump() for c in result.tool_calls]
    assert parser.render(out.content, result.tool_calls) == parser.render(out.content, as_dicts)
    if not name.startswith("llama"):  # content before the calls is kept, whatever it holds
        prefix = "Before the calls: 🙂 {not a call}\n"
        content, calls = parser.parse(prefix + out.text, out.tools)
        assert content == (prefix + (out.content or "")).rstrip()
        assert [c.function.name for c in calls] == [n for n, _ in out.calls]


def test_aliases_parse_alike():
    for alias, canonical in [
        ("qwen", "hermes"),
        ("deepseek_v31", "deepseek_v3_1"),
        ("llama4_json", "llama3_json"),
        ("deepseek_dsml", "deepseek_v4"),
        ("deepseek_v32", "deepseek_v4"),
    ]:
        text = get_parser(canonical).render(None, [("f", {"a": [1, "x"]}), ("g", {})])
        assert calls_of(get_parser(alias).parse_detailed(text)) == [("f", {"a": [1, "x"]}), ("g", {})]


@pytest.mark.parametrize("style", ["list", "v11", "args"])
@SETTINGS
@given(calls=tool_calls(), content=st.one_of(st.none(), st.text(st.characters(blacklist_characters="[`"))))
def test_mistral_round_trip_in_every_style(style, calls, content):
    parser = MistralParser(style=style)
    text = parser.render(content, calls)
    result = parser.parse_detailed(text)
    assert result.errors == []
    assert result.content == ((content or "").rstrip() or None)
    assert calls_of(result) == calls


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(text=st.one_of(st.text(), marker_salted_text()))
def test_parse_never_raises_and_keeps_its_invariants(name, text):
    result = get_parser(name).parse_detailed(text, tools=None)
    if result.tool_calls is None:
        if name == "mistral" and result.content != text:  # as vLLM: the unread payload, without the token
            assert result.content == (text.replace("[TOOL_CALLS]", "").strip() or None)
        else:
            assert result.content == text  # nothing read: the text comes back unchanged
    else:
        assert result.tool_calls
        assert result.content is None or (result.content.strip() and text.startswith(result.content))
        for call in result.tool_calls:
            arguments = json.loads(call.function.arguments)
            # string arguments are kept as a JSON string (hermes, as vLLM/SGLang), and reported
            assert isinstance(arguments, dict) or (isinstance(arguments, str) and result.errors)
            assert call.function.name


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=12, deadline=None)
@given(text=marker_salted_text(), tools=tool_schemas())
def test_parse_never_raises_with_schemas(name, text, tools):
    get_parser(name).parse(text, tools)


@pytest.mark.parametrize("name", FORMATS)
@SETTINGS
@given(text=st.text(st.characters(blacklist_characters="<[{`")))
def test_plain_text_comes_back_unchanged(name, text):
    result = get_parser(name).parse_detailed(text)
    assert (result.content, result.tool_calls, result.errors) == (text, None, [])


@pytest.mark.parametrize("name", FORMATS)
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_format_text_is_parseable(name, data):
    text = data.draw(format_text(name))
    assert get_parser(name).parse(text)[1]


@settings(max_examples=15, deadline=None)
@given(calls=tool_calls())
def test_schema_for_calls_declares_every_argument(calls):
    tools = {
        t["function"]["name"]: t["function"]["parameters"]["properties"] for t in schema_for_calls(calls)
    }
    for name, args in calls:
        assert name in tools
        if calls[[n for n, _ in calls].index(name)][1] is args:
            assert set(tools[name]) == set(args)


@SETTINGS
@given(data=st.data())
def test_qwen3_coder_bare_calls_round_trip(data):
    # real Qwen3-Coder output sometimes has no <tool_call> wrapper: the same calls must come back
    out = data.draw(rendered_outputs("qwen3_coder"))
    parser = get_parser("qwen3_coder")
    blocks = [
        parser.render(None, [call]).removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
        for call in out.calls
    ]
    text = (f"{out.content}\n" if out.content else "") + "\n".join(blocks)
    result = parser.parse_detailed(text, out.tools)
    assert result.errors == []
    assert result.content == out.content
    assert calls_of(result) == out.calls
