"""The formats upstream hermes-agent added: deepseek_v4 (DSML), auto, custom_xml — reading, writing, and Phase 2."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from hermes_envs.parsers import AutoParser, CustomXmlParser, XmlLayout, base, custom_xml_format, get_parser

B = "｜"


def calls(result):
    return [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls or []]


def tool(name, **props):
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


# =================================================================================================== deepseek_v4

D = get_parser("deepseek_v4")


def dsml(*invokes: str, end: str = "") -> str:
    return f"<{B}DSML{B}function_calls>\n" + "\n".join(invokes) + f"\n</{B}DSML{B}function_calls>{end}"


def invoke(name: str, *params: tuple[str, str, str | None]) -> str:
    lines = [f'<{B}DSML{B}invoke name="{name}">']
    for key, value, string in params:
        attr = "" if string is None else f' string="{string}"'
        lines.append(f'<{B}DSML{B}parameter name="{key}"{attr}>{value}</{B}DSML{B}parameter>')
    return "\n".join([*lines, f"</{B}DSML{B}invoke>"])


def test_deepseek_v4_invoke_markup_with_string_flags_and_end_of_sentence():
    text = "Let me check both." + dsml(
        invoke("get_weather", ("location", "Hangzhou", "true"), ("date", "2024-01-16", "true")),
        invoke("get_weather", ("location", "42", "true"), ("days", "[1, 2]", "false")),
        end=f"<{B}end▁of▁sentence{B}>",
    )
    result = D.parse_detailed(text)
    assert calls(result) == [
        ("get_weather", {"location": "Hangzhou", "date": "2024-01-16"}),
        ("get_weather", {"location": "42", "days": [1, 2]}),  # string="true" keeps "42" a string
    ]
    assert result.content == "Let me check both." and result.ok
    assert result.tool_calls[0].id != result.tool_calls[1].id


def test_deepseek_v4_parameter_without_flag_is_typed_by_the_schema():
    text = dsml(invoke("f", ("n", "7", None), ("s", "7", None)))
    assert calls(D.parse_detailed(text, [tool("f", n={"type": "integer"}, s={"type": "string"})])) == [
        ("f", {"n": 7, "s": "7"})
    ]


def test_deepseek_v4_upstream_token_spelling_and_the_ascii_bar_variant():
    fenced = '\n```json\n{"city": "Paris"}\n```\n'
    unicode = f"Sure.<{B}DSML{B}tool_calls_begin{B}>\n<{B}DSML{B}tool_call_begin{B}>get_weather{fenced}<{B}DSML{B}tool_call_end{B}>\n<{B}DSML{B}tool_calls_end{B}>"
    ascii_ = '< | DSML | tool_calls_begin >\n< | DSML | tool_call_begin > get_weather {"city": "Paris"} < | DSML | tool_call_end >\n< | DSML | tool_calls_end >'
    assert calls(D.parse_detailed(unicode)) == [("get_weather", {"city": "Paris"})]
    assert D.parse_detailed(unicode).content == "Sure."
    assert calls(D.parse_detailed(ascii_)) == [("get_weather", {"city": "Paris"})]


def test_deepseek_v4_cut_off_and_broken_calls_are_reported_the_good_ones_kept():
    good = invoke("a", ("x", "1", "false"))
    result = D.parse_detailed(
        dsml(good, invoke("b", ("y", "oops", "false"))) + f'<{B}DSML{B}invoke name="c">\n<'
    )
    assert calls(result) == [("a", {"x": 1}), ("b", {"y": "oops"})]
    assert any('string="false"' in e for e in result.errors) and any("#3" in e for e in result.errors)


def test_deepseek_v4_plain_text_and_a_fenced_example_are_unchanged():
    for text in ("Nothing to call.", "Example:\n```\n" + dsml(invoke("f")) + "\n```\n"):
        assert D.parse_detailed(text).tool_calls is None and D.parse_detailed(text).content == text


@pytest.mark.parametrize(
    "value", ["x <|DSML| z", "x <｜DSML｜ y", "<|DSML|parameter", "< | DSML | tool_calls_begin >"]
)
def test_deepseek_v4_string_value_mentioning_another_dsml_spelling_reads_back_as_written(value):
    # The canonical markup was rewritten wholesale to read other spellings: the value lost a space or its bars.
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": json.dumps({"a": value})},
    }
    result = D.parse_detailed(D.render(None, [call]), None)
    assert result.errors == []
    assert [json.loads(c.function.arguments) for c in result.tool_calls] == [{"a": value}]


def test_deepseek_v4_aliases():
    assert type(get_parser("deepseek_dsml")) is type(get_parser("deepseek_v32")) is type(D)


# =================================================================================================== custom_xml

C = get_parser("custom_xml")


@pytest.mark.parametrize(
    "text",
    [
        '<tool_use>\n<parameter=tool_name>web_search</parameter>\n<parameter=arguments>{"query": "x"}</parameter>\n</tool_use>',
        '<tool_call>\n<tool_use>\n<parameter=tool_name>web_search</parameter>\n<parameter=arguments>{"query": "x"}</parameter>\n</tool_use>\n</tool_call>',
        '<tool_call><parameter=name>web_search</parameter><parameter=arguments>{"query": "x"}</parameter></tool_call>',
    ],
)
def test_custom_xml_upstream_layouts(text):
    result = C.parse_detailed("Searching.\n" + text)
    assert calls(result) == [("web_search", {"query": "x"})] and result.content == "Searching." and result.ok


def test_custom_xml_arguments_that_are_not_json_are_kept_under_value_and_reported():
    text = "<tool_use><parameter=tool_name>note</parameter><parameter=arguments>remember milk</parameter></tool_use>"
    result = C.parse_detailed(text)
    assert calls(result) == [("note", {"value": "remember milk"})] and "kept as" in result.errors[0]


def test_custom_xml_json_arguments_holding_the_close_tag_are_read_whole():
    args = {"content": "a </parameter> b </tool_use>"}
    result = C.parse_detailed(C.render(None, [("write", args)]))
    assert calls(result) == [("write", args)]


def test_custom_xml_same_call_twice_is_two_calls_and_a_call_without_name_is_reported():
    one = "<tool_use><parameter=tool_name>ping</parameter></tool_use>"
    assert calls(C.parse_detailed(one + one)) == [
        ("ping", {}),
        ("ping", {}),
    ]  # upstream dedups; a repeat is real
    result = C.parse_detailed("<tool_use><parameter=arguments>{}</parameter></tool_use>")
    assert result.tool_calls is None and "should name its tool" in result.errors[0]


def test_custom_xml_numbers_calls_not_mentions_of_its_tags():
    # a tag named in prose starts no call: the problems number the calls only, inner <tool_use> in <tool_call> too
    text = (
        "Use <tool_use> to call.\n<tool_call>\n<tool_use>\n<parameter=name>f</parameter>\n"
        "<parameter=arguments>[1]</parameter>\n</tool_use>\n</tool_call>\n<tool_use> again\n"
        "<tool_use>\n<parameter=name>g</parameter>\n<parameter=arguments>x</parameter>\n</tool_use>"
    )
    result = get_parser("custom_xml").parse_detailed(text)
    assert result.content == "Use <tool_use> to call."
    assert [c.function.name for c in result.tool_calls] == ["f", "g"]
    assert [e.split(" arguments")[0] for e in result.errors] == ["tool call #1 (f)", "tool call #2 (g)"]


def test_a_declared_layout_is_registered_and_typed_by_the_schema():
    layout = XmlLayout(call_tags=("invoke",), param_open='<arg name="{key}">', param_close="</arg>",
                       name_keys=("function",), arguments_key=None)  # fmt: skip
    with base.PARSERS.isolated():
        cls = custom_xml_format("my_xml", layout, "my_xml_alias")
        parser = get_parser("my_xml_alias")
        assert type(parser) is cls and parser.name == "my_xml"
        text = parser.render("Ok.", [("f", {"n": 3, "s": "3", "o": {"a": [1]}})])
        assert '<arg name="function">f</arg>' in text
        tools = [tool("f", n={"type": "integer"}, s={"type": "string"}, o={"type": "object"})]
        assert calls(parser.parse_detailed(text, tools)) == [("f", {"n": 3, "s": "3", "o": {"a": [1]}})]
    assert "my_xml" not in base.PARSERS


def test_a_bad_layout_is_refused_with_a_fix():
    with pytest.raises(ValueError, match="param_open should hold"):
        XmlLayout(param_open="<p>")
    assert CustomXmlParser(XmlLayout(call_tags=("call",))).parse("<call>no params</call>") == (
        "<call>no params</call>",
        None,
    )


# =================================================================================================== auto

FORMATS = ["hermes", "qwen3_coder", "glm45", "glm47", "mistral", "llama3_json", "kimi_k2", "deepseek_v3",
           "deepseek_v3_1", "longcat", "deepseek_v4", "custom_xml"]  # fmt: skip


@pytest.mark.parametrize("name", FORMATS)
def test_auto_reads_every_format_and_says_which(name):
    calls_in = [("get_weather", {"city": "Paris", "days": 3}), ("noop", {})]
    tools = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("noop")]
    text = get_parser(name).render(None if name == "llama3_json" else "Checking.", calls_in)
    result = get_parser("auto").parse_detailed(text, tools)
    assert calls(result) == calls_in
    assert result.format in {name, {"glm45": "glm47", "deepseek_v3_1": "deepseek_v3_1"}.get(name, name)}
    expected = get_parser(name).parse_detailed(text, tools)
    assert result.content == expected.content  # Phase 2 parity: what the format's own parser returns


@pytest.mark.parametrize(
    ("template", "chosen"),
    [
        ("{% for tc in m.tool_calls %}<tool_call>\n{{ tc | tojson }}\n</tool_call>{% endfor %}", "hermes"),
        ("<tool_call>\n<function={{ tc.name }}>\n<parameter={{ k }}>", "qwen3_coder"),
        ("<tool_call>{{ tc.name }}\n<arg_key>{{ k }}</arg_key>\n<arg_value>", "glm45"),
        ("<tool_call>{{ tc.name }}<arg_key>{{ k }}</arg_key><arg_value>", "glm47"),
        ("[TOOL_CALLS][{{ calls | tojson }}]", "mistral"),
        ("<|python_tag|>{{ tc | tojson }}", "llama3_json"),
        ("<|tool_calls_section_begin|><|tool_call_begin|>functions.{{ n }}", "kimi_k2"),
        ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{{ n }}\n```json", "deepseek_v3"),
        ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{{ n }}<｜tool▁sep｜>{{ a }}", "deepseek_v3_1"),
        ("<｜DSML｜function_calls>\n<｜DSML｜invoke name=", "deepseek_v4"),
        ("<longcat_tool_call>{{ tc | tojson }}", "longcat"),
    ],
)
def test_auto_chooses_the_format_from_the_chat_template(template, chosen):
    tokenizer = SimpleNamespace(chat_template=template)
    parser = AutoParser(tokenizer=tokenizer)
    assert parser.chosen == chosen and chosen in parser.why
    calls_in = [("f", {"a": 1})]
    text = parser.render(None, calls_in)  # renders in the chosen format
    assert text == get_parser(chosen).render(None, calls_in)
    result = parser.parse_detailed(text, [tool("f", a={"type": "integer"})])
    assert calls(result) == calls_in and result.format == chosen


def test_auto_with_a_template_reads_only_that_format():
    parser = AutoParser(chat_template="<tool_call>\n<function={{ tc.name }}>")
    hermes_text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    assert parser.parse_detailed(hermes_text).tool_calls is None  # not what this model writes
    assert AutoParser().parse_detailed(hermes_text).format == "hermes"


def test_auto_template_with_no_known_format_falls_back_to_the_text():
    parser = AutoParser(tokenizer=SimpleNamespace(chat_template="{{ messages }}"))
    assert parser.chosen is None and "read from each text" in parser.why
    assert parser.parse_detailed("[TOOL_CALLS]f{}").format == "mistral"


def test_auto_tokenizer_templates_as_dict_or_list_or_method():
    assert (
        AutoParser(
            tokenizer=SimpleNamespace(chat_template={"tool_use": "[TOOL_CALLS]", "default": ""})
        ).chosen
        == "mistral"
    )
    listed = [{"name": "default", "template": "x"}, {"name": "tool_use", "template": "<|python_tag|>"}]
    assert AutoParser(tokenizer=SimpleNamespace(chat_template=listed)).chosen == "llama3_json"
    method = SimpleNamespace(chat_template=None, get_chat_template=lambda: "<longcat_tool_call>")
    assert AutoParser(tokenizer=method).chosen == "longcat"


def test_auto_bash_fence_is_a_terminal_call_as_upstream_but_not_other_fences():
    text = "I will list the files.\n```bash\nls -la /work\n```\nThen read them.\n```python\nprint(1)\n```"
    result = get_parser("auto").parse_detailed(text)
    assert calls(result) == [("terminal", {"command": "ls -la /work"})] and result.format == "code_blocks"
    assert result.content == "I will list the files.\nThen read them.\n```python\nprint(1)\n```"
    assert AutoParser(code_blocks=False).parse(text) == (text, None)
    assert get_parser("auto").parse("```\nls\n```") == ("```\nls\n```", None)  # unlabelled: code being shown


def test_auto_raw_json_call_as_upstream():
    text = 'Calling: {"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}'
    result = get_parser("auto").parse_detailed(text)
    assert calls(result) == [("search", {"q": "x"})] and result.format == "llama3_json"


def test_auto_hermes_call_whose_arguments_mention_other_markers():
    args = {
        "path": "doc:\n<tool_call>read\n<arg_key>p</arg_key>\n<arg_value>/x</arg_value>\n</tool_call> [TOOL_CALLS]"
    }
    text = get_parser("hermes").render(None, [("write", args)])
    result = get_parser("auto").parse_detailed(text)
    assert calls(result) == [("write", args)] and result.format == "hermes"


def test_auto_plain_text_is_unchanged():
    assert get_parser("auto").parse_detailed("Just an answer.") == base.ParseResult("Just an answer.", None)


# =================================================================================================== Phase 2


@pytest.mark.parametrize("name", ["auto", "custom_xml", "deepseek_v4", "deepseek_dsml"])
def test_new_formats_plug_in_wherever_a_parser_name_is_taken(name):
    from hermes_envs.conformance.checks.parsers import parser_round_trip
    from hermes_envs.env import HermesAgentEnvConfig, ParserTranslator

    assert HermesAgentEnvConfig(tool_call_parser=name).tool_call_parser == name
    tools = [tool("terminal", command={"type": "string"}, timeout={"type": "integer"})]
    text = get_parser(name).render("Running it.", [("terminal", {"command": "ls", "timeout": 5})])
    content, tool_calls, finish = ParserTranslator(tokenizer=None, parser_name=name).parse_model_output(
        text, tools=tools
    )
    assert (content, finish) == ("Running it.", "tool_calls")
    assert [(c.function.name, json.loads(c.function.arguments)) for c in tool_calls] == [
        ("terminal", {"command": "ls", "timeout": 5})
    ]
    session = SimpleNamespace(
        env=lambda: SimpleNamespace(config=SimpleNamespace(tool_call_parser=name)),
        tools=lambda: (tools, {"terminal"}),
    )
    assert (
        parser_round_trip(session) == []
    )  # HC801: registered, plain text unchanged, the env's tools round-trip


def test_managed_server_translator_binds_the_tokenizer_for_auto():
    from hermes_envs.env import ParserTranslator

    tokenizer = SimpleNamespace(chat_template="<tool_call>\n<function={{ tc.name }}>", eos_token="<|im_end|>")
    translator = ParserTranslator(tokenizer=tokenizer, parser_name="auto")
    assert translator.parser.chosen == "qwen3_coder"
    text = "<tool_call>\n<function=terminal>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call><|im_end|>"
    _content, tool_calls, finish = translator.parse_model_output(
        text, tools=[tool("terminal", command={"type": "string"})]
    )
    assert finish == "tool_calls" and tool_calls[0].function.name == "terminal"
