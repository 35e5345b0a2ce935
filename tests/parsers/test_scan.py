"""The marker scanner's shortcut for plain text (no fence, backtick or reasoning tag yet) finds what the full
fence-and-reasoning reading finds, and a short text is decoded exactly as a long one."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_envs.parsers._json import _SHORT, scan_json_at
from hermes_envs.parsers._scan import MarkerScanner

PIECES = [
    "<tool_call>",
    "```\n",
    "```",
    "~~~\n",
    "`",
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "\n",
    "a b",
    "x",
]


def all_markers(scanner: MarkerScanner) -> list[int]:
    found, pos = [], 0
    while (p := scanner.next(pos)) != -1:
        found.append(p)
        pos = p + 1
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_plain_shortcut_finds_the_same_markers_as_the_full_reading(pieces):
    text = "".join(pieces)
    full = MarkerScanner(text, "<tool_call>")
    full._build()  # the fence and reasoning state from the start, as before the shortcut
    assert all_markers(MarkerScanner(text, "<tool_call>")) == all_markers(full)


def test_a_marker_inside_a_fence_after_plain_markers_is_still_an_example():
    text = "<tool_call>a\n```\n<tool_call>b\n```\n<tool_call>c"
    assert all_markers(MarkerScanner(text, "<tool_call>")) == [0, text.rindex("<tool_call>")]


@given(st.sampled_from(['{"a": 1}', '{"a": "x', '{"a": [1, 2', '{"a" 1}', "[[[", '{"a": "\\q"}', "{}x", "x"]))
def test_short_and_long_texts_decode_alike(doc):
    pad = "p" * (
        _SHORT + 10
    )  # before the value: the long text is read through windows, the short one in place
    value, end, reason = scan_json_at(pad + doc, len(pad))
    assert (value, end - len(pad), reason) == scan_json_at(doc, 0)


def reference_fences(text: str) -> list[tuple[int, int]]:
    """Every (opening, closing end) fence pair, found character by character (CommonMark's rule, spelled out)."""

    def at_line_start(i: int) -> bool:
        k = i
        while k > 0 and i - k < 3 and text[k - 1] in " \t":
            k -= 1
        return k == 0 or text[k - 1] == "\n"

    def run(i: int) -> int:
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        return j

    found, i = [], 0
    while i < len(text):
        if text[i] in "`~" and (i == 0 or text[i - 1] != text[i]) and run(i) - i >= 3 and at_line_start(i):
            char, length, line_end = text[i], run(i) - i, text.find("\n", i)
            close = -1
            k = line_end + 1 if line_end != -1 else len(text)
            while line_end != -1 and k < len(text):
                if text[k] == char and text[k - 1] != char and at_line_start(k) and run(k) - k >= length:
                    e = run(k)
                    while e < len(text) and text[e] in " \t":
                        e += 1
                    if e == len(text) or text[e] in "\r\n":
                        close = e
                        break
                k += 1
            found.append((i, close))
            i = run(i)
        else:
            i += 1
    return found


FENCE_PIECES = ["```", "````", "~~~", "`", "~", "\n", "\r\n", " ", "  ", "\t", "x", "```x"]


def closing_line_end(text, fence):
    """The plain search the scanner's combined one replaced: the end of the line closing ``fence``, or -1."""
    if fence.line_end == -1:
        return -1
    closing = rf"^[ \t]{{0,3}}{re.escape(fence.char)}{{{fence.length},}}[ \t]*(?=[\r\n]|\Z)"
    match = re.compile(closing, re.MULTILINE).search(text, fence.line_end + 1)
    return -1 if match is None else match.end()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FENCE_PIECES), max_size=25), st.integers(0, 40))
def test_fences_are_found_as_commonmark_spells_them(pieces, start):
    from hermes_envs.parsers._scan import _fence_close_and_next, _find_fence_open

    text = "".join(pieces)
    start = min(start, len(text))
    expected = [(i, c) for i, c in reference_fences(text) if i >= start]
    got, pos = [], start
    while (fence := _find_fence_open(text, pos)) is not None:
        got.append((fence.start, _fence_close_and_next(text, fence)[0]))
        pos = fence.start + fence.length
    assert got == expected


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FENCE_PIECES), max_size=25))
def test_one_search_for_a_fence_close_and_the_next_fence_agrees_with_two(pieces):
    """The scanner's one search (the closing line, then the next opening) against the two it replaced."""
    from hermes_envs.parsers._scan import _fence_close_and_next, _find_fence_open

    text = "".join(pieces)
    fence = _find_fence_open(text, 0)
    while fence is not None:
        closing = closing_line_end(text, fence)
        expected = (closing, None if closing == -1 else _find_fence_open(text, closing))
        assert _fence_close_and_next(text, fence) == expected
        fence = expected[1]


SCAN_PIECES = [*FENCE_PIECES, "<tool_call>", "<tool_call>", "\n```\n", "<think>", "</think>", "[THINK]"]


@settings(max_examples=500, deadline=None)
@given(
    pre=st.lists(st.sampled_from(SCAN_PIECES), max_size=6).map("".join),
    unit=st.lists(st.sampled_from(SCAN_PIECES), min_size=1, max_size=8).map("".join),
    post=st.lists(st.sampled_from(SCAN_PIECES), max_size=6).map("".join),
    copies=st.integers(1, 40),
    offset=st.integers(0, 30),
    step=st.integers(1, 3),
    tail=st.lists(st.integers(0, 15), max_size=5),
)
def test_skipped_marker_searches_answer_as_searching_would(pre, unit, post, copies, offset, step, tail):
    """MarkerScanner.skip_copies answers a run of searches one period apart as searching each would, and leaves
    the scanner in the state those searches would (later searches agree too)."""
    text = pre + unit * copies + post
    period = len(unit) * step
    start = min(len(pre) + offset, len(text))
    queries = [start + k * period for k in range(copies + 2)]
    searched = MarkerScanner(text, "<tool_call>")
    expected = [searched.next(q) for q in queries]
    skipping = MarkerScanner(text, "<tool_call>")
    i = 0
    while i < len(queries):
        got = skipping.next(queries[i])
        assert got == expected[i]
        skipped = skipping.skip_copies(queries[i], period, len(queries) - 1 - i)
        for j in range(1, skipped + 1):
            assert expected[i + j] == got + j * period
        i += skipped + 1
    pos = queries[-1]
    for extra in tail:  # what the state left by the skipped searches answers next
        pos += extra
        assert skipping.next(pos) == searched.next(pos)
