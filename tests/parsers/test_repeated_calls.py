"""A looping model's copies of one call (complete, cut off or broken) are built from the first reading, not read
again (``reading_copies``): the result must be exactly what reading each copy gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_envs.parsers._engine as engine
from hermes_envs.parsers import get_parser

DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
KIMI = (
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
)
KIMI_ARGS = "<|tool_call_argument_begin|>"

JSON_PIECES = ['{"a": 1}', '{"a": "', '"', "{", "}", "[", "]", ":", ",", " ", "\n", "x", "`", "1", "{}"]
MARKERS = {
    "hermes": ["<tool_call>", "</tool_call>", '{"name": "f", "arguments": ', '"name"', '"arguments"'],
    "longcat": ["<longcat_tool_call>", "</longcat_tool_call>", '{"name": "f", "arguments": ', '"name"'],
    "deepseek_v3": [DS_BEGIN, DS_END, DS_CALL, DS_CALL_END, DS_SEP, "function", "f\n", "```json\n", "\n```"],
    "deepseek_v3_1": [DS_BEGIN, DS_END, DS_CALL, DS_CALL_END, DS_SEP, "f", "```json\n", "\n```"],
    "kimi_k2": [*KIMI, KIMI_ARGS, "functions.f:0", "functions.f", ":1"],
    "mistral": [
        "[TOOL_CALLS]",
        "[ARGS]",
        "[CALL_ID]",
        "abc123XYZ",
        "f",
        '[{"name": "f", "arguments": {}}]',
        "</s>",
    ],
    "llama3_json": [
        "<|python_tag|>",
        '{"name": "f", "parameters": ',
        '"name"',
        '"parameters"',
        "; ",
        "<|eom_id|>",
    ],
    "custom_xml": [
        "<tool_use>",
        "</tool_use>",
        "<parameter=tool_name>",
        "<parameter=arguments>",
        "</parameter>",
        "f",
        "<tool_call>",
        "</tool_call>",
    ],
}

# where the copy shortcuts live, per format: every format here builds its copies through the engine
MODULES = dict.fromkeys(MARKERS, engine)


def unit(name):
    pieces = [*JSON_PIECES, *MARKERS[name]]
    complete = get_parser(name).render(None, [("f", {"a": "x\ny", "n": 3})])
    # a complete call, and every cut of it (the half-written calls a looping model repeats)
    cuts = st.integers(1, len(complete)).map(lambda k: complete[:k])
    return st.lists(st.one_of(st.sampled_from(pieces), cuts), min_size=1, max_size=8).map("".join)


def outcome(name, result):
    calls = [(c.function.name, c.function.arguments) for c in result.tool_calls or []]
    ids = [c.id for c in result.tool_calls or []] if name == "kimi_k2" else None  # (others: mostly random)
    return result.content, calls, ids, result.errors


def assert_copies_exact(name, text):
    parser = get_parser(name)
    fast = parser.parse_detailed(text)
    module = MODULES[name]
    # no copy built from the first: each one is read (one marker: local_copies; several, as the section formats
    # have: reading_copies)
    originals = {attr: getattr(module, attr) for attr in ("local_copies", "reading_copies")}
    for attr in originals:
        setattr(module, attr, lambda *args: 0)
    try:
        slow = parser.parse_detailed(text)
    finally:
        for attr, original in originals.items():
            setattr(module, attr, original)
    assert outcome(name, fast) == outcome(name, slow)
    if fast.tool_calls and name not in ("kimi_k2", "mistral"):  # every call has an id of its own
        assert len({c.id for c in fast.tool_calls}) == len(fast.tool_calls)
        assert len({id(c.function) for c in fast.tool_calls}) == len(fast.tool_calls)


@pytest.mark.parametrize("name", list(MARKERS))
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), copies=st.integers(2, 90))
def test_copies_give_what_reading_each_copy_gives(name, data, copies):
    pre, piece, post = data.draw(unit(name)), data.draw(unit(name)), data.draw(unit(name))
    opener = MARKERS[name][0]
    text = pre + (opener + piece) * copies + post
    assert_copies_exact(name, text)


@pytest.mark.parametrize("name", list(MARKERS))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    copies=st.integers(2, 70),
    context=st.sampled_from(["```\n", "\n```\n", "`", "<think>", "</think>", "\n~~~\n", "[THINK]"]),
    where=st.sampled_from(["pre", "unit", "post"]),
)
def test_copies_among_fences_and_reasoning_give_what_reading_each_gives(name, data, copies, context, where):
    pre, piece, post = data.draw(unit(name)), data.draw(unit(name)), data.draw(unit(name))
    opener = MARKERS[name][0]
    if where == "pre":
        pre = context + pre
    elif where == "unit":
        piece = piece + context
    else:
        post = post + context + "x" * 200
    assert_copies_exact(name, pre + (opener + piece) * copies + post)


@pytest.mark.parametrize(
    ("name", "cut"),
    # (mistral and llama calls end with their JSON: a cut one is broken, not cut off before a closing marker;
    # custom_xml's call that lost part of its close tag is broken too)
    [
        (name, cut)
        for name in MARKERS
        for cut in (0, 3, 8)
        if cut == 0 or name not in ("mistral", "llama3_json", "custom_xml")
    ],
)
def test_thousands_of_copies_of_a_call_are_all_returned(name, cut):
    parser = get_parser(name)
    one = parser.render(None, [("write_file", {"path": "a", "content": "x\ny", "limit": 3})])
    one = one[: len(one) - cut]  # complete, or cut off just before (or inside) its closing marker
    prose = "" if name == "llama3_json" else "Looping: "  # (llama: calls only, at the start)
    result = parser.parse_detailed(prose + one * 3000)
    assert result.content == (prose.strip() or None)
    assert len(result.tool_calls) == 3000
    assert {(c.function.name, c.function.arguments) for c in result.tool_calls} == {
        ("write_file", '{"path": "a", "content": "x\\ny", "limit": 3}')
    }
    assert_copies_exact(name, prose + one * 3000)
    # inline code after the copies: they are still built from one reading, as far as the marker search is local
    assert_copies_exact(name, prose + one * 3000 + "`x` " + one * 2)


@pytest.mark.parametrize("name", list(MARKERS))
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    copies=st.integers(2, 60),
    value=st.text(alphabet='ab<>/=\n `{}"', max_size=12),
    gap=st.sampled_from(["", "\n", " ", "x"]),
)
def test_copies_of_a_complete_call_give_what_reading_each_gives(name, data, copies, value, gap):
    # the shape a looping model writes most: one whole call again and again, its values holding any text
    one = get_parser(name).render(None, [("f", {"a": value, "n": 3})]) + gap
    pre, post = data.draw(unit(name)), data.draw(unit(name))
    assert_copies_exact(name, pre + one * copies + post)


@pytest.mark.parametrize("spaces", [1, 70, 150, 300])
def test_llama_copies_whose_brace_is_followed_by_a_long_run_of_spaces_give_what_reading_each_gives(spaces):
    # the marker is a brace then a key: how far that pattern read to find the next copy counts like the JSON's
    # reach. The brace after the copies is no marker (no key after its spaces): it is not read, nor reported
    call = "{" + " " * spaces + '"name": "f", "parameters": {"a": 1}}; '
    assert_copies_exact("llama3_json", call * 60 + "{" + " " * spaces + '"name": "g", "parameters": {}}')
    text = call * 60 + "{" + " " * spaces + 'x "name": "g"}'
    assert_copies_exact("llama3_json", text)
    assert not any("valid JSON" in e for e in get_parser("llama3_json").parse_detailed(text).errors)
