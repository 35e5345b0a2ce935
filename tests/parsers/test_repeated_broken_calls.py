"""A looping model's repeated broken call is counted in bulk: the result must be exactly what reading each gives."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_envs.parsers._engine as engine  # (mistral and llama3_json count copies through it)
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
JSON_CONTEXT_UNIT = st.lists(
    st.sampled_from(
        [*PIECES, '"arguments"', "{}", "```\n", "\n```\n", "~~~\n", "<think>", "</think>", "[THINK]"]
    ),
    min_size=1,
    max_size=12,
).map("".join)


def outcome(result):
    calls = [(c.function.name, c.function.arguments) for c in result.tool_calls or []]
    return result.content, calls, result.errors


@pytest.mark.parametrize("name", ["hermes", "longcat"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pre=UNIT, unit=UNIT, copies=st.integers(55, 90), post=UNIT)
def test_bulk_counting_gives_what_reading_each_copy_gives(name, pre, unit, copies, post):
    tag = "<longcat_tool_call>" if name == "longcat" else "<tool_call>"
    text = pre + (tag + unit.replace("<tool_call>", tag)) * copies + post
    assert_json_tagged_bulk_counting_exact(name, text)


def assert_json_tagged_bulk_counting_exact(name, text):
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    original = json_tagged.MAX_ERRORS
    json_tagged.MAX_ERRORS = 10**9  # bulk counting starts once the error list is full: never, so each is read
    try:
        slow = outcome(parser.parse_detailed(text))
    finally:
        json_tagged.MAX_ERRORS = original
    assert fast == slow


@pytest.mark.parametrize("name", ["hermes", "longcat"])
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pre=JSON_CONTEXT_UNIT,
    unit=JSON_CONTEXT_UNIT,
    copies=st.integers(55, 90),
    post=JSON_CONTEXT_UNIT,
    fence=st.sampled_from(["", "```\n", "\n```\n", "<think>", "\n~~~\n"]),
    far=st.sampled_from(["", "x" * 300 + "\n```\n", "x" * 300 + "</think>"]),
)
def test_json_tagged_bulk_counting_among_fences_gives_what_reading_each_copy_gives(
    name, pre, unit, copies, post, fence, far
):
    tag = "<longcat_tool_call>" if name == "longcat" else "<tool_call>"
    text = pre + (fence + tag + unit.replace("<tool_call>", tag)) * copies + post + far
    assert_json_tagged_bulk_counting_exact(name, text)


@pytest.mark.parametrize("name", ["hermes", "longcat"])
def test_a_long_run_of_broken_json_calls_between_fences_is_counted(name):
    tag = "<longcat_tool_call>" if name == "longcat" else "<tool_call>"
    text = ("```\n" + tag + '\n{"name": "wr\n') * 3000  # every other call inside a closed fence
    result = get_parser(name).parse_detailed(text)
    assert result.tool_calls is None and len(result.errors) == 51
    assert_json_tagged_bulk_counting_exact(name, text)


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
        ("llama3_json", engine, ""),
        ("llama3_json", engine, "<|python_tag|>"),
        ("mistral", engine, "[TOOL_CALLS]"),
    ],
)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(pre=UNIT, unit=UNIT, copies=st.integers(55, 90), post=UNIT)
def test_bulk_counting_in_llama_and_mistral_gives_what_reading_each_copy_gives(
    name, module, tag, pre, unit, copies, post
):
    text = pre + (tag + unit) * copies + post
    assert_counted_exact(name, module, text)


def assert_counted_exact(name, module, text):
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    original = module.count_repeats
    module.count_repeats = lambda *args: 0  # no copy counted: each one is read
    try:
        slow = outcome(parser.parse_detailed(text))
    finally:
        module.count_repeats = original
    assert fast == slow  # (call ids are random: outcome compares names and arguments)


@pytest.mark.parametrize(
    ("name", "module", "tag"),
    [
        ("mistral", engine, "[TOOL_CALLS]"),
        ("llama3_json", engine, ""),
        ("llama3_json", engine, "<|python_tag|>"),
    ],
)
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pre=JSON_CONTEXT_UNIT,
    unit=JSON_CONTEXT_UNIT,
    copies=st.integers(55, 90),
    post=JSON_CONTEXT_UNIT,
    fence=st.sampled_from(["", "```\n", "\n```\n", "<think>", "[THINK]", "\n~~~\n"]),
    far=st.sampled_from(["", "x" * 300 + "\n```\n", "x" * 300 + "[/THINK]"]),
    head=st.sampled_from(["", "[{", ' [{"', "{"]),
)
def test_bulk_counting_among_fences_in_mistral_and_llama_gives_what_reading_each_copy_gives(
    name, module, tag, pre, unit, copies, post, fence, far, head
):
    text = pre + (fence + tag + head + unit) * copies + post + far
    assert_counted_exact(name, module, text)


@pytest.mark.parametrize(
    ("name", "module", "unit"),
    [("mistral", engine, '```\n[TOOL_CALLS][{"name": "wr\n'), ("llama3_json", engine, '```\n{"name": "wr\n')],
)
def test_a_long_run_of_broken_mistral_or_llama_calls_between_fences_is_counted(name, module, unit):
    text = unit * 3000  # every other call inside a closed fence
    result = get_parser(name).parse_detailed(text)
    assert result.tool_calls is None and len(result.errors) == 51
    assert_counted_exact(name, module, text)


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
    assert_xml_bulk_counting_exact(name, text)


def one_by_one(name):
    """The parser ``name`` reading every copy of a looping model's call (its public ``skip_repeats`` seam)."""
    parser = type(get_parser(name))()
    parser.skip_repeats = False
    return parser


def assert_xml_bulk_counting_exact(name, text):
    parser = get_parser(name)
    fast = outcome(parser.parse_detailed(text))
    slow = outcome(one_by_one(name).parse_detailed(text))
    assert fast == slow


# what decides whether a marker counts: fences (closed or not), inline code, reasoning blocks
CONTEXT_PIECES = ["```\n", "\n```\n", "~~~\n", "````\n", "<think>", "</think>", "[THINK]", "[/THINK]", "`"]
XML_CONTEXT_UNIT = st.lists(st.sampled_from(XML_PIECES + CONTEXT_PIECES), min_size=1, max_size=12).map(
    "".join
)


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "glm47"])
@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pre=XML_CONTEXT_UNIT,
    unit=XML_CONTEXT_UNIT,
    copies=st.integers(55, 90),
    post=XML_CONTEXT_UNIT,
    start=st.sampled_from(["<tool_call>", "<function=", "```\n<tool_call>", "<think><tool_call>"]),
    fence=st.sampled_from(["", "```\n", "<think>", "\n~~~\n"]),
    far=st.sampled_from(
        ["", "x" * 300 + "\n```\n", "x" * 300 + "</think>", "x" * 300 + "\n~~~\n<tool_call>f"]
    ),
)
def test_bulk_counting_among_fences_and_reasoning_gives_what_reading_each_copy_gives(
    name, pre, unit, copies, post, start, fence, far
):
    # markers alternating inside and outside fences (a fence line in each copy), or hidden by one that closes
    # far after the run (past what the counting compares)
    text = pre + (start + unit + fence) * copies + post + far
    assert_xml_bulk_counting_exact(name, text)


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("glm45", "```\n<tool_call>write_file\n<arg_key>\n"),
        ("glm47", "```\n<tool_call>write_file<arg_key>\n"),
    ],
)
def test_a_long_run_of_broken_xml_calls_between_fences_is_counted(name, unit):
    # a fence line between the copies (a broken call resumes at the next marker, so each fence opens a new one)
    text = unit * 3000
    result = get_parser(name).parse_detailed(text)
    assert result.tool_calls is None and len(result.errors) == 51
    assert int(result.errors[-1].split()[0]) + 50 >= 2999
    assert_xml_bulk_counting_exact(name, text)


@pytest.mark.parametrize(
    ("name", "unit"),
    [("qwen3_coder", "<tool_call>\n<function=writ"), ("glm45", "<tool_call>write_file\n<arg_key>")],
)
def test_a_long_run_of_a_broken_xml_call_is_counted(name, unit):
    result = get_parser(name).parse_detailed(unit * 3000)
    assert result.tool_calls is None
    # every copy is counted (the last one, cut by the end of the text, is one problem of another kind)
    assert len(result.errors) == 51 and int(result.errors[-1].split()[0]) + 50 >= 2999


# a looping model repeating a *complete* call: the copies are built from one reading (the engine's replay)
XML_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"k": {"type": "integer"}, "p": {"type": "string"}, "o": {"type": "object"}},
            },
        },
    }
]
XML_VALUES = st.sampled_from(
    ["v", "1", "x\ny", "{}", '{"a": 1}', "</parameter>", "</arg_value>", "<", "", " 2 "]
)
GAPS = st.sampled_from(
    ["", "\n", "x", " <tool_call> ", "\n```\n", "<think>", "</think>", "`", "</parameter>"]
)


@st.composite
def repeated_calls(draw, name):
    parser = get_parser(name)
    keys = draw(st.lists(st.sampled_from(["k", "p", "o", "q"]), max_size=3, unique=True))
    args = {k: draw(XML_VALUES) for k in keys}
    call = parser.render(None, [("f", args)])
    if draw(st.booleans()):  # cut or damage one copy's end, as a model's output may be
        call = call[: draw(st.integers(len(call) // 2, len(call)))]
    unit = call + draw(GAPS)
    return draw(GAPS) + unit * draw(st.integers(55, 90)) + draw(st.sampled_from(["", "x", call[:20]]))


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "glm47"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), typed=st.booleans())
def test_repeated_complete_xml_calls_give_what_reading_each_copy_gives(name, data, typed):
    text = data.draw(repeated_calls(name))
    tools = XML_TOOLS if typed else None
    parser = get_parser(name)
    fast = parser.parse_detailed(text, tools)
    slow = one_by_one(name).parse_detailed(text, tools)
    assert outcome(fast) == outcome(slow)
    ids = [c.id for c in fast.tool_calls or []]
    assert len(set(ids)) == len(ids)  # every copy is its own call


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "glm47"])
def test_a_long_run_of_the_same_complete_call_is_read_in_full(name):
    unit = get_parser(name).render(None, [("f", {"p": "v"})]) + "\nx"
    result = get_parser(name).parse_detailed(unit * 3000, XML_TOOLS)
    assert len(result.tool_calls) == 3000 and not result.errors
    assert {c.function.arguments for c in result.tool_calls} == {'{"p": "v"}'}
    assert len({c.id for c in result.tool_calls}) == 3000


@pytest.mark.parametrize("name", ["qwen3_coder", "glm45", "glm47"])
def test_a_long_run_of_the_same_mistyped_call_reports_every_copy(name):
    unit = get_parser(name).render(None, [("f", {"k": "v"})]) + "\n"  # k is an integer in the schema
    result = get_parser(name).parse_detailed(unit * 3000, XML_TOOLS)
    assert len(result.tool_calls) == 3000
    assert result.errors[-1] == "2950 more problems of the same kind were not listed."
    assert "tool call #50 (f) parameter 'k' should be integer" in result.errors[49]
