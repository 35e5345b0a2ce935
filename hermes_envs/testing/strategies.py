"""Hypothesis strategies for tool calls, tool schemas and model outputs in every tool-call format.

>>> from hypothesis import given
>>> from hermes_envs.testing.strategies import rendered_outputs
>>> @given(rendered_outputs("hermes"))
... def test_round_trip(out):
...     content, calls = get_parser("hermes").parse(out.text, out.tools)

``tool_calls()`` draws lists of ``(name, arguments)`` pairs with realistic JSON values: unicode, nested objects,
and strings holding braces, quotes, newlines and markup-like text (``</parameter>``, ``<tool_call>``, a whole tool
call inside file content). ``tool_schemas()`` draws OpenAI ``tools`` lists. ``format_text(name)`` draws the text
a model would emit in format ``name`` (optionally after some content); ``rendered_outputs(name)`` draws the same
with the expected content, calls and matching tool schemas attached, for round-trip tests.
"""

from __future__ import annotations

import json
from typing import Any, Literal, NamedTuple

from hypothesis import strategies as st

__all__ = [
    "MARKUP_SNIPPETS",
    "RenderedOutput",
    "arguments",
    "format_text",
    "json_values",
    "marker_salted_text",
    "rendered_outputs",
    "schema_for_calls",
    "tool_calls",
    "tool_names",
    "tool_schemas",
]

# Each snippet starts and ends with a word, so two of them never form a closing tag followed by an opening tag.
MARKUP_SNIPPETS: tuple[str, ...] = (
    'say {"name": "x", "arguments": {}} done',
    "a } b { c ]] d",
    'quote " and \\ backslash',
    "line one\nline two\n\nline four",
    "x</parameter>y",
    "see <tool_call> here",
    "see `<tool_call>` here",
    "a </arg_value> b",
    "k <arg_key>z</arg_key> v",
    "html <div class='a'>&amp;</div> end",
    "md\n```python\nprint('hi')\n```\nend",
    "file:\n<tool_call>\n<function=read>\n<parameter=file-path>\n/etc/x\n</parameter>\n</function>\n</tool_call>\nend",
    "doc:\n<tool_call>read\n<arg_key>file-path</arg_key>\n<arg_value>/etc/x</arg_value>\n</tool_call>\nend",
    "tokens [TOOL_CALLS] and <|python_tag|> and <|tool_call_begin|> and <｜tool▁call▁begin｜> end",
    "emoji 🙂 and 中文 and Ünïcödé end",
)
_FULL_CALL_SNIPPETS = frozenset(s for s in MARKUP_SNIPPETS if s.startswith(("file:", "doc:")))

_COMMON_NAMES = ("get_weather", "read_file", "write_file", "search", "terminal", "run_python", "getUserById")
_COMMON_KEYS = ("path", "content", "query", "city", "n", "limit", "flag", "options")


def tool_names() -> st.SearchStrategy[str]:
    """Realistic function names (``[A-Za-z][A-Za-z0-9_]*``)."""
    return st.one_of(st.sampled_from(_COMMON_NAMES), st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True))


def _keys() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(_COMMON_KEYS), st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True))


@st.composite
def _markup_strings(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(MARKUP_SNIPPETS)), max_size=4))
    full_calls = [p for p in pieces if p in _FULL_CALL_SNIPPETS]
    for extra in full_calls[1:]:  # at most one embedded whole call per string (see docs/parsers.md)
        pieces.remove(extra)
    return "".join(pieces)


def _strings() -> st.SearchStrategy[str]:
    # No `</think>`: before a later call it ends the reasoning, as in reasoning parsers (see docs/parsers.md).
    return st.one_of(st.text(max_size=30), _markup_strings()).filter(lambda s: "</think>" not in s)


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value: null, booleans, integers, finite floats, strings (with markup), lists, objects."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**15), max_value=10**15),
        st.floats(allow_nan=False, allow_infinity=False),
        _strings(),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=10).filter(lambda s: "</think>" not in s), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def arguments() -> st.SearchStrategy[dict[str, Any]]:
    """A call's arguments: an object with identifier-like keys (possibly empty)."""
    return st.dictionaries(_keys(), json_values(), max_size=5)


def tool_calls(
    min_size: int = 1, max_size: int = 4, unique_names: bool = False
) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    """Lists of ``(name, arguments)`` pairs; ``unique_names`` draws each function at most once."""
    return st.lists(
        st.tuples(tool_names(), arguments()),
        min_size=min_size,
        max_size=max_size,
        unique_by=(lambda call: call[0]) if unique_names else None,
    )


_TYPE_SCHEMAS = (
    {"type": "string"},
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "object"},
    {"type": "array", "items": {"type": "string"}},
    {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    {"type": ["string", "null"]},
    {"type": "string", "enum": ["a", "b"]},
)


def tool_schemas(min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[list[dict[str, Any]]]:
    """OpenAI ``tools`` lists (``{"type": "function", "function": {"name", "description", "parameters"}}``)."""
    tool = st.builds(
        lambda name, props, desc: {
            "type": "function",
            "function": {
                "name": name,
                "description": desc,
                "parameters": {"type": "object", "properties": props, "required": sorted(props)[:1]},
            },
        },
        tool_names(),
        st.dictionaries(_keys(), st.sampled_from(_TYPE_SCHEMAS), max_size=5),
        st.text(max_size=40),
    )
    return st.lists(tool, min_size=min_size, max_size=max_size, unique_by=lambda t: t["function"]["name"])


def _schema_of(value: Any) -> dict[str, Any]:
    if value is None:
        return {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, dict):
        return {"type": "object"}
    return {"type": "array"}


def schema_for_calls(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """An OpenAI ``tools`` list whose parameter types match ``calls`` (first call of a name wins)."""
    tools: dict[str, dict[str, Any]] = {}
    for name, args in calls:
        if name not in tools:
            props = {key: _schema_of(value) for key, value in args.items()}
            tools[name] = {
                "type": "function",
                "function": {"name": name, "parameters": {"type": "object", "properties": props}},
            }
    return list(tools.values())


class RenderedOutput(NamedTuple):
    """A drawn model output and what parsing it must give back."""

    text: str
    content: str | None
    calls: list[tuple[str, dict[str, Any]]]
    tools: list[dict[str, Any]]


_XML_FORMATS = frozenset({"qwen3_coder", "glm45", "glm47"})
_SURROGATES: tuple[Literal["Cs"]] = ("Cs",)
_PROSE_ALPHABET = st.characters(blacklist_characters="`<>[]{}|｜▁\\", blacklist_categories=_SURROGATES)


@st.composite
def _content(draw: st.DrawFn, parser_name: str) -> str | None:
    from hermes_envs.parsers import get_parser

    if parser_name.startswith("llama"):
        return None
    parts = [draw(st.text(_PROSE_ALPHABET, max_size=60))]
    if draw(st.booleans()):  # an example call shown in a closed code fence is content, not a call
        example = get_parser(parser_name).render(None, [("example_tool", {"q": 1})])
        parts.append(f"\nFor example:\n```\n{example}\n```\n")
    if draw(st.booleans()):
        parts.append(
            draw(st.sampled_from(['JSON like {"name": "x", "arguments": {}} is fine. ', "Ünïcödé 🙂 "]))
        )
    parts.append(draw(st.text(_PROSE_ALPHABET, max_size=30)))
    return draw(st.one_of(st.none(), st.just("".join(parts))))


@st.composite
def rendered_outputs(draw: st.DrawFn, parser_name: str) -> RenderedOutput:
    """A model output in format ``parser_name`` with its expected content, calls, and matching ``tools``.

    The expected content is what the parser returns: the drawn content with trailing whitespace removed, or
    None when that is empty. XML-ish formats carry values as text, so their calls use one name each and the
    attached ``tools`` type every parameter.
    """
    from hermes_envs.parsers import get_parser

    calls = draw(tool_calls(unique_names=parser_name in _XML_FORMATS))
    content = draw(_content(parser_name))
    text = get_parser(parser_name).render(content, calls)
    expected = (content or "").rstrip() or None
    return RenderedOutput(text, expected, calls, schema_for_calls(calls))


def format_text(parser_name: str) -> st.SearchStrategy[str]:
    """Text a model would emit in format ``parser_name``: generated calls, optionally after content."""
    return rendered_outputs(parser_name).map(lambda out: out.text)


_ALL_MARKERS = (
    "<tool_call>",
    "</tool_call>",
    "<longcat_tool_call>",
    "</longcat_tool_call>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "<function=",
    "<parameter=",
    "</parameter>",
    "</function>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "```",
    "```json\n",
    "function",
    '{"name": "f", "arguments": ',
    '{"name": "f", "parameters": {}}',
    "; ",
    "{",
    "}",
    "[",
    '"',
    "\n",
)


def marker_salted_text() -> st.SearchStrategy[str]:
    """Arbitrary text mixed with every format's markers and JSON fragments (for never-raise tests)."""
    piece = st.one_of(
        st.text(max_size=10), st.sampled_from(_ALL_MARKERS), st.builds(json.dumps, json_values(4))
    )
    return st.lists(piece, max_size=25).map("".join)
