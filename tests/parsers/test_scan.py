"""The marker scanner's shortcut for plain text (no fence, backtick or reasoning tag yet) finds what the full
fence-and-reasoning reading finds, and a short text is decoded exactly as a long one."""

from __future__ import annotations

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
