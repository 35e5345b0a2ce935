"""qwen3_coder, glm45 and glm47: structure-aware value ends and schema typing."""

from __future__ import annotations

import pytest

from hermes_envs.parsers import ToolSchemas, convert_value, get_parser

Q = get_parser("qwen3_coder")
G45 = get_parser("glm45")
G47 = get_parser("glm47")


def tools(name, **props):
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": props}},
        }
    ]


FILE_TOOLS = tools("write_file", path={"type": "string"}, content={"type": "string"})


def qcall(name, **params):
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def test_qwen3_coder_two_calls_with_content(calls_of, weather_tools):
    text = (
        "I'll check both cities.\n\n"
        + qcall("get_weather", city="Paris", days=3)
        + "\n"
        + qcall("get_weather", city="Zürich", days="7")
    )
    result = Q.parse_detailed(text, weather_tools)
    assert result.content == "I'll check both cities."
    assert calls_of(result) == [
        ("get_weather", {"city": "Paris", "days": 3}),
        ("get_weather", {"city": "Zürich", "days": 7}),
    ]
    assert result.errors == []


def test_qwen3_coder_no_parameters(calls_of):
    assert calls_of(Q.parse_detailed("<tool_call>\n<function=list_files>\n</function>\n</tool_call>")) == [
        ("list_files", {})
    ]


def test_qwen3_coder_multiline_value_keeps_inner_whitespace(calls_of):
    code = "def f():\n    return 1\n\n\n  # trailing spaces  "
    result = Q.parse_detailed(qcall("write_file", path="a.py", content=code), FILE_TOOLS)
    assert calls_of(result) == [("write_file", {"path": "a.py", "content": code})]


def test_string_params_are_verbatim_even_when_they_look_typed(calls_of):
    schema = tools("f", a={"type": "string"}, b={"type": "string"}, c={"type": "string"})
    result = Q.parse_detailed(qcall("f", a="null", b="42", c='{"x": 1}'), schema)
    assert calls_of(result) == [("f", {"a": "null", "b": "42", "c": '{"x": 1}'})]


def test_schema_typing_of_every_type(calls_of):
    schema = tools(
        "f",
        i={"type": "integer"},
        n={"type": "number"},
        b={"type": "boolean"},
        o={"type": "object"},
        a={"type": "array"},
        opt={"anyOf": [{"type": "integer"}, {"type": "null"}]},
        s_or_null={"type": ["string", "null"]},
    )
    text = qcall("f", i="12", n="2.5", b="true", o='{"k": [1, 2]}', a='[1, "x"]', opt="null", s_or_null="hi")
    assert calls_of(Q.parse_detailed(text, schema)) == [
        (
            "f",
            {"i": 12, "n": 2.5, "b": True, "o": {"k": [1, 2]}, "a": [1, "x"], "opt": None, "s_or_null": "hi"},
        )
    ]


def test_schema_typing_accepts_python_literal_forms(calls_of):
    schema = tools(
        "f",
        b={"type": "boolean"},
        o={"type": "object"},
        opt={"anyOf": [{"type": "integer"}, {"type": "null"}]},
        a={"type": "array"},
    )
    text = qcall("f", b="True", o="{'a': 1, 'b': None}", opt="None", a="('x', 2)")
    assert calls_of(Q.parse_detailed(text, schema)) == [
        ("f", {"b": True, "o": {"a": 1, "b": None}, "opt": None, "a": ["x", 2]})
    ]


def test_value_not_matching_its_schema_is_kept_and_reported(calls_of):
    result = Q.parse_detailed(qcall("f", n="twelve"), tools("f", n={"type": "integer"}))
    assert calls_of(result) == [("f", {"n": "twelve"})]
    assert "parameter 'n' should be integer per the tool schema" in result.errors[0]


def test_without_schema_every_value_stays_a_string(calls_of):
    text = qcall("f", n="12", b="true", o='{"a": 1}', z="null")
    assert calls_of(Q.parse_detailed(text)) == [("f", {"n": "12", "b": "true", "o": '{"a": 1}', "z": "null"})]
    # an undeclared parameter of a known tool is untyped too
    assert calls_of(Q.parse_detailed(qcall("f", extra="5"), tools("f", n={"type": "integer"}))) == [
        ("f", {"extra": "5"})
    ]


def test_value_containing_closing_tags_and_a_whole_tool_call(calls_of):
    # a model writing a file that documents the format itself
    content = (
        "Example:\n<tool_call>\n<function=read_file>\n<parameter=path>\n/etc/hosts\n</parameter>\n"
        "</function>\n</tool_call>\nand a stray </parameter> here\n<parameter=other>\nx"
    )
    text = (
        "Writing docs.\n"
        + qcall("write_file", path="docs/format.md", content=content)
        + "\n"
        + qcall("write_file", path="b", content="c")
    )
    result = Q.parse_detailed(text, FILE_TOOLS)
    assert calls_of(result) == [
        ("write_file", {"path": "docs/format.md", "content": content}),
        ("write_file", {"path": "b", "content": "c"}),
    ]
    assert result.errors == []


def test_value_ending_with_an_embedded_call(calls_of):
    content = "see:\n<tool_call>\n<function=x>\n<parameter=path>\np\n</parameter>\n</function>\n</tool_call>"
    result = Q.parse_detailed(qcall("write_file", content=content, path="z"), FILE_TOOLS)
    assert calls_of(result) == [("write_file", {"content": content, "path": "z"})]


def test_schema_names_decide_which_parameter_tag_is_real(calls_of):
    # `<parameter=mode>` inside the value is not a declared parameter of write_file, so it is text
    content = "a\n</parameter>\n<parameter=mode>\nb"
    result = Q.parse_detailed(qcall("write_file", content=content, path="p"), FILE_TOOLS)
    assert calls_of(result) == [("write_file", {"content": content, "path": "p"})]


def test_trailing_prose_after_the_last_call(calls_of):
    text = qcall("f", a="1") + "\nDone, waiting for the result."
    assert calls_of(Q.parse_detailed(text)) == [("f", {"a": "1"})]


def test_cut_off_calls_keep_what_is_complete(calls_of):
    good = qcall("a", x="1")
    for cut in (
        "<tool_call>\n<function=b>\n<parameter=y>\nhalf a val",
        "<tool_call>\n<function=b>\n<parameter=y>\n2\n</parameter>\n",
        "<tool_call>\n<func",
    ):
        result = Q.parse_detailed(good + "\n" + cut)
        assert calls_of(result) == [("a", {"x": "1"})], cut
        assert len(result.errors) == 1 and result.errors[0].startswith("tool call #2"), result.errors
    # </function> present, </tool_call> missing: complete enough
    assert calls_of(Q.parse_detailed(good[: -len("</tool_call>")])) == [("a", {"x": "1"})]


def test_broken_call_among_good_ones(calls_of):
    text = qcall("a", x="1") + "\n<tool_call>\nnot a function\n</tool_call>\n" + qcall("c", z="3")
    result = Q.parse_detailed(text)
    assert calls_of(result) == [("a", {"x": "1"}), ("c", {"z": "3"})]
    assert len(result.errors) == 1 and "#2" in result.errors[0]


def test_single_line_parameters_without_newlines(calls_of):
    text = (
        "<tool_call><function=f><parameter=a>x</parameter><parameter=b>y z</parameter></function></tool_call>"
    )
    assert calls_of(Q.parse_detailed(text)) == [("f", {"a": "x", "b": "y z"})]


def test_render_qwen3_coder_layout():
    assert Q.render(None, [("f", {"a": "x", "n": 2, "o": {"k": True}})]) == (
        "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n<parameter=n>\n2\n</parameter>\n"
        '<parameter=o>\n{"k": true}\n</parameter>\n</function>\n</tool_call>'
    )


# --------------------------------------------------------------------------------------------------- glm


def test_glm45_realistic_output(calls_of, weather_tools):
    text = (
        "Let me check the weather.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n</tool_call>"
    )
    result = G45.parse_detailed(text, weather_tools)
    assert result.content == "Let me check the weather."
    assert calls_of(result) == [("get_weather", {"city": "北京", "days": 3}), ("get_time", {})]


def test_glm47_compact_output(calls_of):
    text = "<tool_call>search<arg_key>q</arg_key><arg_value> two  spaces </arg_value></tool_call><tool_call>noop</tool_call>"
    assert calls_of(G47.parse_detailed(text)) == [("search", {"q": " two  spaces "}), ("noop", {})]
    # glm45 reads the compact call with arguments, but not a compact no-argument one (as SGLang): reported
    result = G45.parse_detailed(text)
    assert calls_of(result) == [("search", {"q": " two  spaces "})] and "'noop'" in result.errors[0]


def test_glm_value_with_markup_and_embedded_call(calls_of):
    content = "doc:\n<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>/x</arg_value>\n</tool_call>\ntail </arg_value> end"
    text = G45.render("Saving.", [("write_file", {"path": "f.md", "content": content}), ("noop", {})])
    result = G45.parse_detailed(text, FILE_TOOLS)
    assert calls_of(result) == [("write_file", {"path": "f.md", "content": content}), ("noop", {})]
    assert result.content == "Saving."


def test_glm_json_body_after_the_name(calls_of):
    assert calls_of(G45.parse_detailed('<tool_call>f\n{"a": 1}\n</tool_call>')) == [("f", {"a": 1})]


def test_glm_cut_off_value_is_reported(calls_of):
    text = "<tool_call>a</tool_call><tool_call>b<arg_key>k</arg_key><arg_value>unfinished"
    result = G47.parse_detailed(text)
    assert calls_of(result) == [("a", {})] and "cut off" in result.errors[0]


def test_glm_schema_typing(calls_of):
    schema = tools("f", n={"type": "number"}, flags={"type": "array"}, s={"type": "string"})
    text = "<tool_call>f<arg_key>n</arg_key><arg_value>1e3</arg_value><arg_key>flags</arg_key><arg_value>['a']</arg_value><arg_key>s</arg_key><arg_value>007</arg_value></tool_call>"
    assert calls_of(G47.parse_detailed(text, schema)) == [("f", {"n": 1000.0, "flags": ["a"], "s": "007"})]


# --------------------------------------------------------------------------------------------------- typing unit


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ("5", {"type": "integer"}, 5),
        ("5.0", {"type": "integer"}, 5),
        (" 7 ", {"type": "number"}, 7),
        ("false", {"type": "boolean"}, False),
        ("FALSE", {"type": "boolean"}, False),
        ("None", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("x", {"anyOf": [{"type": "string"}, {"type": "null"}]}, "x"),
        ("2", {"enum": [1, 2, 3]}, 2),
        ("12", {"type": ["integer", "string"]}, 12),
        ("abc", {"type": ["integer", "string"]}, "abc"),
        ("  spaced\n", {"type": "string"}, "  spaced\n"),
        ("{'a': (1, 2)}", {"type": "object"}, {"a": [1, 2]}),
        ("anything", {"description": "no type"}, "anything"),
        ("5", None, "5"),
    ],
)
def test_convert_value(raw, schema, expected):
    value, problem = convert_value(raw, schema)
    assert value == expected and type(value) is type(expected) and problem is None


def test_tool_schemas_tolerates_malformed_entries():
    index = ToolSchemas(
        [
            None,
            "x",
            {"function": {"name": 3}},
            {"name": "bare", "parameters": {"properties": {"a": {}}}},
            {"type": "function", "function": {"name": "np"}},
        ]
    )
    assert index.properties("bare") == {"a": {}}
    assert index.properties("np") == {}
    assert index.properties("missing") is None


def test_tools_given_as_objects_type_the_values_like_dicts(calls_of):
    """openai's (or vLLM's) pydantic tool models and dataclasses work as ``tools`` (were silently ignored)."""
    from dataclasses import dataclass

    from openai.types.chat import ChatCompletionFunctionTool

    params = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}

    @dataclass
    class Fn:
        name: str
        parameters: dict

    @dataclass
    class Tool:
        function: Fn
        type: str = "function"

    text = "<tool_call>\n<function=f>\n<parameter=n>\n5\n</parameter>\n<parameter=s>\n5\n</parameter>\n</function>\n</tool_call>"
    pydantic_tool = ChatCompletionFunctionTool.model_validate(
        {"type": "function", "function": {"name": "f", "parameters": params}}
    )
    for tools in ([pydantic_tool], [Tool(Fn("f", params))]):
        assert calls_of(Q.parse_detailed(text, tools)) == [("f", {"n": 5, "s": "5"})]
