"""The C-speed searches that replaced regex scans over the rest of the text answer exactly as the regexes did.

Each replaced pattern read (or tried a match at) every character of degenerate output: a ``[>\\n]`` class, a
``[^>\\n]*>`` name read from each opening, a pattern starting with lookaheads (no literal prefix for the engine
to skip to). The replacements must give the same answers, here compared on random text built from the pieces
that matter to each."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_envs.parsers import deepseek_v4, get_parser
from hermes_envs.parsers._scan import CharsFinder, count_repeats
from hermes_envs.parsers._xml_scan import XmlScan

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(
    text=st.lists(st.sampled_from([">", "\n", "x", "<function=f", " ", "é"]), max_size=30).map("".join),
    starts=st.lists(st.integers(0, 40), max_size=8),
)
def test_chars_finder_answers_as_the_character_class_search(text, starts):
    finder = CharsFinder(text, ">\n")
    for pos in sorted(starts):  # (queries never go backwards)
        match = re.compile(r"[>\n]").search(text, pos)
        assert finder.find(pos) == (-1 if match is None else match.start())


QWEN_PIECES = ["<function=", "f", ">", "\n", " ", "<tool_call>", "</function>", "<parameter=k>", "x"]


@SETTINGS
@given(text=st.lists(st.sampled_from(QWEN_PIECES), max_size=30).map("".join), pos=st.integers(0, 60))
def test_qwen3_coder_head_check_matches_the_head_pattern(text, pos):
    parser = get_parser("qwen3_coder")
    got = parser._head_at(text, pos, XmlScan(text, parser))
    want = parser.head.match(text, pos)
    assert (got and got.span(), got and got.group(1)) == (want and want.span(), want and want.group(1))


BAR = deepseek_v4.BAR
# the pattern as it was before its literal "<" was moved in front of the lookaheads
_BEFORE = re.compile(
    rf"(?!<{BAR}DSML{BAR}tool_calls?_(?:begin|end){BAR}>)"
    rf"(?!</?{BAR}DSML{BAR}(?![ \t]|tool[_▁ ]calls?[_▁ ](?:begin|end)))" + deepseek_v4._SPELLINGS.pattern
)
DSML_PIECES = [
    "<",
    "/",
    "｜",
    "|",
    " ",
    "DSML",
    "tool_calls_begin",
    "tool▁call_end",
    "tool call",
    ">",
    "invoke",
    "x",
]


@SETTINGS
@given(text=st.lists(st.sampled_from(DSML_PIECES), max_size=30).map("".join))
def test_deepseek_v4_rewrite_check_finds_what_it_found_before(text):
    got, want = deepseek_v4._REWRITTEN.search(text), _BEFORE.search(text)
    assert (got and got.span()) == (want and want.span())


def _count_repeats_one_by_one(text: str, start: int, period: int, upto: int) -> int:
    window, copies, at = text[start:upto], 0, start + period
    while text.startswith(window, at):
        at += period
        copies += 1
    return copies


@SETTINGS
@given(
    unit=st.text("ab", min_size=1, max_size=6),
    times=st.integers(0, 80),
    noise=st.text("abc", max_size=8),
    tail=st.text("abc", max_size=8),
    start=st.integers(0, 10),
    period=st.integers(1, 12),
    width=st.integers(0, 40),
)
def test_count_repeats_counts_the_copies_one_by_one_counting_does(
    unit, times, noise, tail, start, period, width
):
    # count_repeats measures the run where the text repeats itself one period on, in doubling stretches
    text = noise + unit * times + tail
    upto = start + width
    assert count_repeats(text, start, period, upto) == _count_repeats_one_by_one(text, start, period, upto)


DSML_CALL = get_parser("deepseek_v4").render(
    None, [("write_file", {"path": "a", "content": "x\ny", "limit": 3}), ("f", {"k": [1]})]
)


def _outcome(result):
    calls = [(c.function.name, c.function.arguments) for c in result.tool_calls or []]
    return result.content, calls, result.errors


@SETTINGS
@given(
    cut=st.integers(1, len(DSML_CALL)),
    times=st.integers(1, 120),
    tail=st.sampled_from(["", "x", DSML_CALL, "</｜DSML｜invoke>"]),
    head=st.sampled_from(["", "Sure.\n\n", "<think>a</think>"]),
)
def test_deepseek_v4_skipping_repeated_parameters_gives_the_full_reading(cut, times, tail, head):
    # a call cut anywhere and repeated: one invoke whose parameters run through every copy; skipping the copies
    # of a stretch of parameters (counting their problems) must give exactly what reading each one gives
    text = head + DSML_CALL[:cut] * times + tail
    parser = get_parser("deepseek_v4")
    fast = _outcome(parser.parse_detailed(text))
    parser.skip_repeats = False
    assert fast == _outcome(parser.parse_detailed(text))


XML_KEY_PIECES = ["<parameter=", "k", ">", "\n", "<", " ", "[", "</parameter>", "é"]


@SETTINGS
@given(
    text=st.lists(st.sampled_from(XML_KEY_PIECES), max_size=30).map("".join),
    starts=st.lists(st.integers(0, 60), max_size=8),
)
def test_custom_xml_key_read_by_find_matches_the_key_pattern(text, starts):
    """custom_xml reads a parameter's key up to the first newline, '<' or '>' with one cached search; the lazy
    pattern it replaced stepped over every other character (40x upstream after an opening followed by 100 KB of
    '[')."""
    parser = get_parser("custom_xml")
    assert parser._key_end == ">"
    finder = CharsFinder(text, "\n<>")
    for pos in sorted(starts):  # (queries never go backwards)
        want = parser._key_then.match(text, pos)
        assert parser._read_key(text, pos, finder) == (want and (want.group(1), want.end()))
