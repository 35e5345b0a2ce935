"""The XML-ish readers' shortcuts for degenerate output give exactly what the general reading gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_envs.parsers import get_parser
from hermes_envs.parsers._scan import Finder
from hermes_envs.parsers._xml_scan import XmlScan
from hermes_envs.parsers.custom_xml import CustomXmlParser

CUSTOM_PIECES = [
    "<tool_use>",
    "</tool_use>",
    "<tool_call>",
    "</tool_call>",
    "<parameter=",
    "<parameter=tool_name>",
    "<parameter=name>",
    "<parameter=arguments>",
    "<parameter=k>",
    "</parameter>",
    "f",
    '{"a": 1}',
    "{",
    ">",
    "<",
    "\n",
    " ",
    "x",
]
CUSTOM_TEXT = st.lists(st.sampled_from(CUSTOM_PIECES), max_size=40).map("".join)


def outcome(result):
    calls = [(c.function.name, c.function.arguments) for c in result.tool_calls or []]
    return result.content, calls, result.errors


def read_each_mention(text: str, tools=None):
    parser = CustomXmlParser()
    parser.skip_repeats = False  # step from each mention to the next marker, read each copy of a call
    return parser.parse_detailed(text, tools)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=CUSTOM_TEXT, repeat=st.integers(1, 5), tail=CUSTOM_TEXT)
def test_custom_xml_skipping_mentions_in_bulk_gives_the_general_reading(text, repeat, tail):
    text = text * repeat + tail
    assert outcome(get_parser("custom_xml").parse_detailed(text)) == outcome(read_each_mention(text))


def test_custom_xml_thousands_of_mentions_then_a_call():
    call = get_parser("custom_xml").render(None, [("f", {"a": 1})])
    text = "<tool_use>\n<p" * 20_000 + "\n" + call
    result = get_parser("custom_xml").parse_detailed(text)
    assert [(c.function.name, c.function.arguments) for c in result.tool_calls] == [("f", '{"a": 1}')]
    assert outcome(result) == outcome(read_each_mention(text))


@pytest.mark.parametrize("context", ["`", "```\n", "<think>", "</think>", "[THINK]", "~~~\n"])
def test_custom_xml_mentions_among_fences_are_read_one_by_one(context):
    call = get_parser("custom_xml").render(None, [("f", {"a": 1})])
    text = ("<tool_use>\n<p" + context) * 50 + call
    assert outcome(get_parser("custom_xml").parse_detailed(text)) == outcome(read_each_mention(text))


# pieces without a close tag: the texts where a cheap search shows every call tag is a mention (see
# CustomXmlParser._only_mentions), among fences, inline code and reasoning tags
MENTION_PIECES = ["<tool_use>", "<tool_call>", "<parameter=", "tool_name", "arguments", "\n", ">", "<", " ",
                  "```\n", "`", "<think>", "</think>", "~~~\n", '{"a": 1}']  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.lists(st.sampled_from(MENTION_PIECES), max_size=40).map("".join), repeat=st.integers(1, 5))
def test_custom_xml_text_of_mentions_only_gives_the_general_reading(text, repeat):
    text *= repeat
    assert outcome(get_parser("custom_xml").parse_detailed(text)) == outcome(read_each_mention(text))


@pytest.mark.parametrize("key", ["k", "k" * 256, "k" * 257, "k" * 5000])
def test_custom_xml_mentions_between_fences_then_a_key(key):
    # a key that ends (``<parameter=k>``, short or long) with no close tag anywhere: a call cut off, reported,
    # not skipped as mentions
    text = "```\n<tool_use>\n<parameter=to\n" * 100 + f"<tool_use>\n<parameter={key}>v"
    result = get_parser("custom_xml").parse_detailed(text)
    assert result.errors and result.tool_calls is None
    assert outcome(result) == outcome(read_each_mention(text))


@pytest.mark.parametrize("run", [255, 256, 257, 5000])
def test_custom_xml_long_runs_after_parameter_openings_are_mentions(run):
    text = ("<tool_use>\n<parameter=" + "[" * run) * 20 + "\n>" + "<tool_use>\n<parameter=" + "{" * run
    result = get_parser("custom_xml").parse_detailed(text)
    assert result.tool_calls is None and not result.errors
    assert outcome(result) == outcome(read_each_mention(text))


QWEN_PIECES = ["<tool_call>", "<function=", "<function=f>", "<parameter=", "<parameter=k>", "</parameter>",
               "</function>", "f", "k", " ", "\n", ">", "<", "x"]  # fmt: skip
# long stretches: names around the length the patterns read in one go (256)
QWEN_TEXT = st.lists(st.sampled_from([*QWEN_PIECES, "y" * 100, "z" * 17]), max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=QWEN_TEXT, queries=st.lists(st.integers(0, 2000), max_size=8))
def test_qwen3_coder_real_call_search_agrees_with_the_head_pattern(text, queries):
    parser = get_parser("qwen3_coder")
    for needle in ("<tool_call>", "<function="):
        fast = parser.real_starts(text, needle)
        general = Finder(text, needle, lambda at: parser.real_call_at(text, at))
        for q in sorted(queries):
            assert fast.find(q) == general.find(q)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=QWEN_TEXT)
def test_qwen3_coder_parameter_openings_agree_with_the_pattern(text):
    parser = get_parser("qwen3_coder")
    scan = XmlScan(text, parser)
    for at in [i for i in range(len(text)) if text.startswith(parser.open_needle, i)]:
        fast, general = parser._opening_at(text, at, scan), parser.param_open.match(text, at)
        assert (fast and fast.group(0)) == (general and general.group(0))


@pytest.mark.parametrize(
    "text",
    [
        "<function=f "
        * 20_000,  # names that never end (no ">" or newline): each was read to the end of the text
        "<tool_call><function=f " * 10_000,
        "<tool_call>\n<function=f>\n<parameter=k>\nv"
        + "<parameter=a " * 20_000
        + "</parameter>\n</function>",
    ],
)
def test_qwen3_coder_thousands_of_unended_names_are_read_once(text):
    # (the first one re-read the rest of the text from each opening: 30 s of CPU for 240 kB; now a few ms)
    result = get_parser("qwen3_coder").parse_detailed(text)
    assert result.errors


@pytest.mark.parametrize("length", [0, 255, 256, 257, 258, 600])
@pytest.mark.parametrize("end", [">", "\n", "", "<function=f>"])
@pytest.mark.parametrize("start", ["<function=", "<tool_call>\n<function="])
def test_qwen3_coder_long_names_are_judged_as_the_head_pattern_judges_them(length, end, start):
    parser = get_parser("qwen3_coder")
    for text in (
        start + "n" * length + end,
        (start + "n" * length + end + " ") * 3,
        start * 3 + "n" * length + end,
    ):
        for needle in ("<tool_call>", "<function="):
            fast = parser.real_starts(text, needle)
            general = Finder(text, needle, lambda at, t=text: parser.real_call_at(t, at))
            assert [fast.find(q) for q in range(len(text))] == [general.find(q) for q in range(len(text))]
