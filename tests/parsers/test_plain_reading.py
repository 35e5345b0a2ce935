"""The shortcut for the usual DeepSeek/Kimi output (one section of well-formed calls after plain prose) gives
exactly what the general reading gives, whatever the text; and it is taken for the usual output."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_envs.parsers import get_parser
from hermes_envs.parsers.deepseek_v4 import _TOKEN_READER

SECTIONED = ["deepseek_v3", "deepseek_v3_1", "kimi_k2", "deepseek_v4 tokens"]


class _Tokens:
    """deepseek_v4's reader of upstream's token spelling, with a renderer for the tests."""

    def __getattr__(self, name):
        return getattr(_TOKEN_READER, name)

    def render(self, content, calls):
        body = "".join(
            f"{_TOKEN_READER.call_begin}{n}\n```json\n{json.dumps(a, ensure_ascii=False)}\n```{_TOKEN_READER.call_end}"
            for n, a in calls
        )
        return (content or "") + _TOKEN_READER.section_begin + body + _TOKEN_READER.section_end


def reader(name):
    return _Tokens() if name == "deepseek_v4 tokens" else get_parser(name)


def summary(result):
    calls = [
        (c.id if c.id.startswith("functions.") else "", c.function.name, c.function.arguments)
        for c in result.tool_calls or []
    ]
    return result.content, calls, result.errors


def pieces(name):
    parser = reader(name)
    one = parser.render(None, [("get_weather", {"city": "Paris", "n": 2})])
    two = parser.render("Checking.", [("f", {"a": [1, {"b": "x"}]}), ("g", {})])
    markers = [parser.section_begin, parser.section_end, parser.call_begin, parser.call_end]
    junk = [
        "\n",
        " ",
        "Sure. ",
        "`",
        "```\n",
        "<think>",
        "</think>",
        "{",
        '{"a": 1}',
        "[",
        '"',
        "\\n",
        "x{y}\n",
        "\t",
    ]
    cuts = [one[:k] for k in range(1, len(one), max(1, len(one) // 9))]
    return [one, two, *markers, *junk, *cuts]


@pytest.mark.parametrize("name", SECTIONED)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_plain_reading_agrees_with_the_general_one(name, data):
    parser = reader(name)
    text = "".join(data.draw(st.lists(st.sampled_from(pieces(name)), max_size=8)))
    plain = parser._parse_plain(text)
    if plain is not None:
        assert summary(plain) == summary(parser._parse_general(text))


@pytest.mark.parametrize("name", SECTIONED)
def test_the_usual_output_takes_the_plain_reading(name):
    parser = reader(name)
    text = parser.render("Let me check.", [("get_weather", {"city": "Paris"}), ("f", {"a": "é"})]) + "\n"
    plain = parser._parse_plain(text)
    assert plain is not None
    assert [(c.function.name, json.loads(c.function.arguments)) for c in plain.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("f", {"a": "é"}),
    ]
    assert plain.content == "Let me check."


@pytest.mark.parametrize("name", SECTIONED)
def test_arguments_are_kept_as_written_when_valid_json(name):
    parser = reader(name)
    text = parser.render(None, [("f", {"a": 1})]).replace('{"a": 1}', '{"a":1,"b":"\\u00e9"}')
    (call,) = parser.parse(text)[1]
    assert call.function.arguments == '{"a":1,"b":"\\u00e9"}'  # as vLLM keeps these formats' arguments
    raw_newline = parser.render(None, [("f", {"a": 1})]).replace('{"a": 1}', '{"a": "x\ny"}')
    (call,) = parser.parse(raw_newline)[1]
    assert json.loads(call.function.arguments) == {
        "a": "x\ny"
    }  # a raw newline in a string: re-encoded, valid JSON
    assert "\n" not in call.function.arguments


@pytest.mark.parametrize("name", SECTIONED)
def test_several_sections_with_prose_between_take_the_plain_reading(name):
    parser = reader(name)
    first = parser.render("Let me check.", [("get_weather", {"city": "Paris"})])
    second = parser.render("And the other one.", [("f", {"a": 1})])
    text = first + "\n\n" + second + "\nDone."
    plain = parser._parse_plain(text)
    assert plain is not None and summary(plain) == summary(parser._parse_general(text))
    assert [c.function.name for c in plain.tool_calls] == ["get_weather", "f"]
