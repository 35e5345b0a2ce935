"""Example outputs for the JSON-carrying formats, and each upstream bug class.

Cases follow what vLLM's and SGLang's parser suites cover: several calls, newlines, unicode, nested JSON, empty
arguments, unclosed calls, broken JSON among good calls, JSON-string arguments, markers in prose and code fences.
"""

from __future__ import annotations

import pytest

from hermes_envs.parsers import MistralParser, ParserError, get_parser

H = get_parser("hermes")


def test_hermes_single_call_with_content(calls_of):
    text = (
        'I will check.\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    result = H.parse_detailed(text)
    assert result.content == "I will check."
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]
    assert result.errors == [] and result.ok


def test_hermes_no_content_gives_none(calls_of):
    content, calls = H.parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert content is None
    assert calls[0].function.arguments == "{}"
    assert calls[0].id.startswith("call_") and len(calls[0].id) == 29


def test_hermes_multiple_calls_are_all_kept_in_order(calls_of):
    # upstream bug class: a greedy regex kept only the last call
    text = "".join(
        f'<tool_call>\n{{"name": "f{i}", "arguments": {{"i": {i}}}}}\n</tool_call>\n' for i in range(5)
    )
    assert calls_of(H.parse_detailed(text)) == [(f"f{i}", {"i": i}) for i in range(5)]


def test_hermes_multiline_pretty_printed_arguments(calls_of):
    # upstream bug class: `.` without DOTALL dropped multi-line arguments
    text = '<tool_call>\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "a.py",\n    "content": "x = 1\\ny = 2\\n"\n  }\n}\n</tool_call>'
    assert calls_of(H.parse_detailed(text)) == [("write_file", {"path": "a.py", "content": "x = 1\ny = 2\n"})]


def test_hermes_raw_newlines_inside_json_strings_are_accepted(calls_of):
    text = '<tool_call>{"name": "run_python", "arguments": {"code": "for i in range(3):\n    print(i)"}}</tool_call>'
    assert calls_of(H.parse_detailed(text)) == [("run_python", {"code": "for i in range(3):\n    print(i)"})]


def test_hermes_unicode_nested_and_markup_in_strings(calls_of):
    args = {
        "q": "météo à Zürich 🌧",
        "filters": {"tags": ["a", {"b": None}], "n": 2.5},
        "note": "</tool_call><tool_call>",
    }
    text = H.render(None, [("search", args)])
    assert calls_of(H.parse_detailed(text)) == [("search", args)]


def test_hermes_arguments_as_json_string_are_decoded_once(calls_of):
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1, \\"s\\": \\"{\\\\\\"x\\\\\\": 2}\\"}"}</tool_call>'
    # the outer string decodes to an object whose "s" is itself a JSON-looking string: that one stays a string
    assert calls_of(H.parse_detailed(text)) == [("f", {"a": 1, "s": '{"x": 2}'})]


def test_hermes_parameters_key_and_openai_shape_are_accepted(calls_of):
    text = (
        '<tool_call>{"name": "a", "parameters": {"x": 1}}</tool_call>'
        '<tool_call>{"type": "function", "function": {"name": "b", "arguments": {"y": 2}}}</tool_call>'
    )
    assert calls_of(H.parse_detailed(text)) == [("a", {"x": 1}), ("b", {"y": 2})]


def test_hermes_broken_json_among_good_calls_is_reported_not_dropped_silently(calls_of):
    text = (
        'Doing it.<tool_call>{"name": "a", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {"x": 1,}}</tool_call>\n'
        '<tool_call>{"name": "c", "arguments": {"y": [1, 2]}}</tool_call>'
    )
    result = H.parse_detailed(text)
    assert result.content == "Doing it."
    assert calls_of(result) == [("a", {}), ("c", {"y": [1, 2]})]
    assert len(result.errors) == 1 and result.errors[0].startswith("tool call #2 should be valid JSON")


def test_hermes_unclosed_final_call_cut_by_max_tokens(calls_of):
    complete = '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>\n'
    # the JSON is complete but the end tag is missing: keep it
    result = H.parse_detailed(complete + '<tool_call>\n{"name": "b", "arguments": {"y": 2}}')
    assert calls_of(result) == [("a", {"x": 1}), ("b", {"y": 2})] and result.errors == []
    # cut inside the JSON: keep what is complete, report the rest
    result = H.parse_detailed(complete + '<tool_call>\n{"name": "b", "arguments": {"y": ')
    assert calls_of(result) == [("a", {"x": 1})]
    assert "tool call #2 should be valid JSON" in result.errors[0]
    result = H.parse_detailed(complete + "<tool_call>")
    assert calls_of(result) == [("a", {"x": 1})] and "#2" in result.errors[0]


def test_hermes_only_broken_calls_return_the_whole_text_as_content():
    text = 'Let me try <tool_call>{"name": "f", "arguments": {</tool_call>'
    result = H.parse_detailed(text)
    assert (result.content, result.tool_calls) == (text, None)
    assert len(result.errors) == 1


def test_hermes_extra_closing_brace_keeps_the_call_and_reports_the_junk(calls_of):
    result = H.parse_detailed('<tool_call>{"name": "f", "arguments": {"a": 1}}}</tool_call>')
    assert calls_of(result) == [("f", {"a": 1})]
    assert "should end with </tool_call> right after its JSON" in result.errors[0]


def test_hermes_missing_name_is_reported():
    result = H.parse_detailed('<tool_call>{"arguments": {"a": 1}}</tool_call>')
    assert result.tool_calls is None and "non-empty string 'name'" in result.errors[0]


def test_hermes_non_object_arguments_are_reported():
    result = H.parse_detailed('<tool_call>{"name": "f", "arguments": [1, 2]}</tool_call>')
    assert result.tool_calls is None and "arguments should be a JSON object" in result.errors[0]


def test_hermes_json_in_prose_without_marker_is_not_a_call():
    text = 'The call looks like {"name": "get_weather", "arguments": {"city": "Paris"}}.'
    assert H.parse_detailed(text).tool_calls is None


def test_markers_inside_code_fences_are_examples_not_calls(calls_of):
    example = (
        'Use this format:\n```xml\n<tool_call>\n{"name": "example", "arguments": {}}\n</tool_call>\n```\n'
    )
    assert H.parse(example) == (example, None)
    real = example + 'Now for real:\n<tool_call>{"name": "real", "arguments": {}}</tool_call>'
    result = H.parse_detailed(real)
    assert calls_of(result) == [("real", {})]
    assert result.content == example + "Now for real:"


def test_marker_in_inline_code_is_a_mention_not_a_call():
    text = "Wrap calls in `<tool_call>` tags, e.g. `<tool_call>{...}</tool_call>`."
    assert H.parse_detailed(text).tool_calls is None
    assert H.parse_detailed(text).errors == []


def test_unclosed_fence_does_not_hide_a_real_call(calls_of):
    text = 'Here:\n```python\nprint(1)\n<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    assert calls_of(H.parse_detailed(text)) == [("f", {})]


def test_json_list_inside_one_tag(calls_of):
    text = '<tool_call>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": "v"}}]</tool_call>'
    assert calls_of(H.parse_detailed(text)) == [("a", {}), ("b", {"k": "v"})]


def test_longcat_uses_its_own_tags(calls_of):
    text = 'ok<longcat_tool_call>{"name": "f", "arguments": {"a": 1}}</longcat_tool_call>'
    assert calls_of(get_parser("longcat").parse_detailed(text)) == [("f", {"a": 1})]
    assert get_parser("longcat").parse('<tool_call>{"name": "f", "arguments": {}}</tool_call>')[1] is None


# --------------------------------------------------------------------------------------------------- mistral

M = get_parser("mistral")


def test_mistral_list_form(calls_of):
    text = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]'
    assert calls_of(M.parse_detailed(text)) == [("get_weather", {"city": "Paris"}), ("get_time", {})]


def test_mistral_v11_form_with_content_and_several_calls(calls_of):
    text = 'Sure.[TOOL_CALLS]get_weather{"city": "Paris", "unit": "°C"}[TOOL_CALLS]get_time{}'
    result = M.parse_detailed(text)
    assert result.content == "Sure."
    assert calls_of(result) == [("get_weather", {"city": "Paris", "unit": "°C"}), ("get_time", {})]


def test_mistral_args_and_call_id_forms(calls_of):
    text = '[TOOL_CALLS]search[ARGS]{"q": "x"}[TOOL_CALLS]read[CALL_ID]a1B2c3D4e[ARGS]{"path": "/tmp"}'
    assert calls_of(M.parse_detailed(text)) == [("search", {"q": "x"}), ("read", {"path": "/tmp"})]


def test_mistral_broken_call_among_good_ones(calls_of):
    text = '[TOOL_CALLS]a{"x": 1}[TOOL_CALLS]b{"x": [}[TOOL_CALLS]c{}'
    result = M.parse_detailed(text)
    assert calls_of(result) == [("a", {"x": 1}), ("c", {})]
    assert len(result.errors) == 1 and "#2" in result.errors[0]


def test_mistral_cut_off_list_is_reported():
    result = M.parse_detailed('[TOOL_CALLS] [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "argu')
    assert result.tool_calls is None and result.errors


def test_mistral_render_styles():
    calls = [("f", {"a": 1})]
    assert MistralParser().render(None, calls) == '[TOOL_CALLS] [{"name": "f", "arguments": {"a": 1}}]'
    assert MistralParser(style="v11").render(None, calls) == '[TOOL_CALLS]f{"a": 1}'
    assert MistralParser(style="args").render("Hi", calls) == 'Hi[TOOL_CALLS]f[ARGS]{"a": 1}'
    with pytest.raises(ParserError):
        MistralParser(style="yaml")  # type: ignore[arg-type]
    with pytest.raises(ParserError):
        MistralParser(style="v11").render(None, [("bad name", {})])


# --------------------------------------------------------------------------------------------------- llama

L = get_parser("llama3_json")


def test_llama_single_and_python_tag(calls_of):
    assert calls_of(L.parse_detailed('{"name": "f", "parameters": {"a": 1}}')) == [("f", {"a": 1})]
    result = L.parse_detailed('<|python_tag|>{"name": "f", "parameters": {}}')
    assert result.content is None and calls_of(result) == [("f", {})]


def test_llama_several_calls_separated_by_semicolons(calls_of):
    text = '{"name": "a", "parameters": {"x": "1; 2"}}; {"name": "b", "parameters": {}};{"name": "c", "arguments": {}}'
    assert calls_of(L.parse_detailed(text)) == [("a", {"x": "1; 2"}), ("b", {}), ("c", {})]


def test_llama_json_in_prose_is_a_call_but_not_in_a_code_fence(calls_of):
    # as vLLM: a call-shaped object anywhere in the prose is a call, the prose before it the content
    result = L.parse_detailed('Sure! {"name": "f", "parameters": {}}')
    assert result.content == "Sure!" and calls_of(result) == [("f", {})]
    for text in ('```json\n{"name": "f", "parameters": {}}\n```', 'Write `{"name": "f", "parameters": {}}`.'):
        assert L.parse_detailed(text) == L.parse_detailed(text).__class__(text, None, [])


def test_llama_json_answer_that_is_not_call_shaped_is_content():
    text = '{"answer": 42, "reason": "because"}'
    assert L.parse(text) == (text, None)


def test_llama_broken_second_call_and_trailing_text_are_reported(calls_of):
    result = L.parse_detailed('{"name": "a", "parameters": {}}; {"name": "b", "parameters": {')
    assert calls_of(result) == [("a", {})] and "#2" in result.errors[0]
    result = L.parse_detailed('{"name": "a", "parameters": {}} Anything else?')
    assert calls_of(result) == [("a", {})] and "ignored" in result.errors[0]
    # an end-of-turn token left in the text is not a problem
    result = L.parse_detailed('{"name": "a", "parameters": {}}<|eom_id|>')
    assert calls_of(result) == [("a", {})] and result.errors == []


def test_llama_python_tag_with_code_is_reported_but_kept_as_content():
    text = '<|python_tag|>brave_search.call(query="x")'
    result = L.parse_detailed(text)
    assert (result.content, result.tool_calls) == (text, None) and result.errors


def test_llama_render_refuses_content():
    with pytest.raises(ParserError):
        L.render("hello", [("f", {})])


# --------------------------------------------------------------------------------------------------- deepseek

B, E = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CB, CE, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def test_deepseek_v3_two_calls(calls_of):
    text = (
        f"Checking both.{B}{CB}function{SEP}get_weather\n```json\n"
        '{"city": "Paris"}\n```'
        f"{CE}\n{CB}function{SEP}get_time\n```json\n{{}}\n```{CE}{E}"
    )
    result = get_parser("deepseek_v3").parse_detailed(text)
    assert result.content == "Checking both."
    assert calls_of(result) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    assert result.errors == []


def test_deepseek_v3_backticks_inside_arguments(calls_of):
    args = {"content": "```python\nprint(1)\n```", "note": CE}
    text = get_parser("deepseek_v3").render(None, [("write_file", args)])
    assert calls_of(get_parser("deepseek_v3").parse_detailed(text)) == [("write_file", args)]


def test_deepseek_v3_cut_off_keeps_complete_calls(calls_of):
    text = f'{B}{CB}function{SEP}a\n```json\n{{}}\n```{CE}{CB}function{SEP}b\n```json\n{{"x": '
    result = get_parser("deepseek_v3").parse_detailed(text)
    assert calls_of(result) == [("a", {})] and "#2" in result.errors[0]


def test_deepseek_v31(calls_of):
    text = f'ok{B}{CB}get_weather{SEP}{{"city": "東京"}}{CE}{CB}noop{SEP}{{}}{CE}{E}'
    for name in ("deepseek_v3_1", "deepseek_v31"):
        result = get_parser(name).parse_detailed(text)
        assert result.content == "ok"
        assert calls_of(result) == [("get_weather", {"city": "東京"}), ("noop", {})]


def test_deepseek_v31_broken_json_between_good_calls(calls_of):
    text = f'{B}{CB}a{SEP}{{"x": 1}}{CE}{CB}b{SEP}{{"x": }}{CE}{CB}c{SEP}{{}}{CE}{E}'
    result = get_parser("deepseek_v3_1").parse_detailed(text)
    assert calls_of(result) == [("a", {"x": 1}), ("c", {})]
    assert len(result.errors) == 1 and "#2" in result.errors[0]


# --------------------------------------------------------------------------------------------------- kimi

K = get_parser("kimi_k2")
KS, KE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
KB, KA, KC = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


def test_kimi_keeps_its_ids(calls_of):
    text = f'Let me look.{KS}{KB}functions.get_weather:0{KA}{{"city": "Paris"}}{KC}{KB}functions.search:1{KA}{{}}{KC}{KE}'
    result = K.parse_detailed(text)
    assert result.content == "Let me look."
    assert calls_of(result) == [("get_weather", {"city": "Paris"}), ("search", {})]
    assert [c.id for c in result.tool_calls] == ["functions.get_weather:0", "functions.search:1"]


def test_kimi_render_keeps_or_makes_ids():
    text = K.render(
        None,
        [
            {"id": "functions.f:7", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            ("g", {}),
        ],
    )
    assert "functions.f:7" in text and "functions.g:1" in text


def test_kimi_multiline_arguments_and_unclosed_section(calls_of):
    text = f'{KS}{KB}functions.write:0{KA}{{\n  "path": "a.txt",\n  "content": "l1\\nl2"\n}}{KC}'
    result = K.parse_detailed(text)
    assert calls_of(result) == [("write", {"path": "a.txt", "content": "l1\nl2"})] and result.errors == []


def test_degenerate_output_lists_fifty_problems_then_counts_the_rest():
    result = H.parse_detailed('<tool_call>{"nam' * 500)
    assert result.tool_calls is None
    assert len(result.errors) == 51
    assert result.errors[-1] == "450 more problems of the same kind were not listed."


def test_kimi_reads_a_later_section_too(calls_of):
    one = K.render(None, [("a", {})])
    result = K.parse_detailed(one + "\nthen\n" + K.render(None, [("b", {"x": 1})]))
    assert calls_of(result) == [("a", {}), ("b", {"x": 1})]


def test_call_ids_are_unique():
    text = H.render(None, [("f", {})] * 200)
    assert len({c.id for c in H.parse(text)[1]}) == 200
