"""A looping model's repeated broken call is counted in bulk: the result must be exactly what reading each gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_envs.parsers.json_tagged as json_tagged
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
