"""The plain-text fast path: a reply holding none of a format's call markers is returned before any other pass,
and the answer is the one the full reading gives, on every text (with the markers or without)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_envs.parsers import HermesParser, ToolCallParser, get_parser, list_parsers
from hermes_envs.parsers.custom_xml import CustomXmlParser, XmlLayout
from hermes_envs.parsers.json_tagged import JsonTaggedParser
from hermes_envs.parsers.qwen3_coder import Qwen3CoderParser
from hermes_envs.testing.strategies import marker_salted_text

ALIASES = ("qwen", "deepseek_v31", "llama4_json", "deepseek_dsml", "deepseek_v32")
FORMATS = [n for n in list_parsers() if n not in ALIASES]
FAST = [n for n in FORMATS if get_parser(n)._no_call_without]
CALL = [("write_file", {"path": "a.py", "content": "x = {'a': [1]}\n", "limit": 3})]


def _full(parser: ToolCallParser, text: str) -> tuple[Any, ...]:
    """The reading without the fast path (``_parse`` itself), in comparable form (ids differ run to run)."""
    got = type(parser)._parse(parser, text, None)
    return _shape(got)


def _shape(result: Any) -> tuple[Any, ...]:
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls or []]
    return result.content, calls if result.tool_calls is not None else None, list(result.errors)


def _corpus() -> list[str]:
    """Replies without calls, every format's calls (and cut-off pieces of them), and markers out of context."""
    rng = random.Random(5)
    texts = [
        "",
        "The answer is 42.",
        'Use `f()`:\n\n```python\ndef f():\n    return {"a": [1, 2]}\n```\n',
        "<think>\nreasoning about <tool_call> here\n</think>\n\nDone.",
        "[THINK]plan[/THINK] The result: {not json}",
        "a < b and c > d, [1, 2] {x}",
        '{"\\u006eame": "f", "parameters": {}}',  # a call with an escaped key (llama)
        '<|python_tag|>{"nam": 1}',
    ]
    for name in FORMATS:
        if name == "auto":
            continue
        rendered = get_parser(name).render(None if name.startswith("llama") else "Some prose first.", CALL)
        texts.append(rendered)
        texts += [rendered[: len(rendered) * k // 7] for k in range(1, 7)]
        texts.append(rendered[len(rendered) // 3 :])
    for _ in range(40):
        texts.append("".join(rng.choice(texts)[: rng.randint(0, 60)] for _ in range(4)))
    return texts


@pytest.mark.parametrize("name", FAST)
def test_fast_path_answers_as_the_full_reading_does(name):
    parser = get_parser(name)
    for text in _corpus():
        assert _shape(parser.parse_detailed(text)) == _full(parser, text), text
        content, calls = parser.parse(text)
        assert (content, calls is None) == (_full(parser, text)[0], _full(parser, text)[1] is None), text
        if not any(m in text for m in parser._no_call_without):  # what makes the fast path right
            assert _full(parser, text) == (text, None, []), text
        if not any(m in text for m in parser._no_call_in_parse):  # (parse returns no problems)
            assert _full(parser, text)[:2] == (text, None), text


@pytest.mark.parametrize("name", FAST)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(), marker_salted_text()))
def test_fast_path_agrees_with_the_full_reading_on_any_text(name, text):
    parser = get_parser(name)
    full = _full(parser, text)
    assert _shape(parser.parse_detailed(text)) == full
    content, calls = parser.parse(text)
    assert (content, calls is None) == (full[0], full[1] is None)
    if calls is not None:
        assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == full[1]


def test_every_format_but_auto_has_a_fast_path():
    assert sorted(set(FORMATS) - set(FAST)) == ["auto"]


@pytest.mark.parametrize("name", FAST)
def test_a_reply_without_markers_is_not_read_any_further(name):
    class Spied(type(get_parser(name))):  # type: ignore[misc]
        """The format's own grammar (its markers declared again, as a subclass with its own reading must) whose full
        reading fails the test."""

        def _parse(self, text: str, tools: object) -> Any:
            raise AssertionError("the full reading ran on a reply holding no marker")

        @classmethod
        def _call_markers(cls) -> tuple[str, ...]:
            return super()._call_markers()

        @classmethod
        def _report_markers(cls) -> tuple[str, ...]:
            return super()._report_markers()

    parser = Spied()
    assert parser._no_call_without and parser._no_call_in_parse  # (the spy keeps the fast path)
    text = "The file is written; nothing else to do. (a < b)"
    assert parser.parse(text) == (text, None)
    got = parser.parse_detailed(text)
    assert (got.content, got.tool_calls, got.errors) == (text, None, [])


def test_the_markers_follow_the_grammar_a_subclass_declares():
    class Tagged(JsonTaggedParser):
        start_tag = "<call>"
        end_tag = "</call>"

    class OwnReading(HermesParser):  # its own _parse: the inherited markers say nothing about it
        def _parse(self, text, tools):
            return super()._parse(text.replace("<call>", "<tool_call>"), tools)

    class UpstreamWay(HermesParser):  # upstream's way: only parse(text) overridden
        def parse(self, text, tools=None):
            return text, None

    assert Tagged()._no_call_without == ("<call>",)
    assert Tagged().parse('<call>{"name": "f", "arguments": {}}</call>')[1]
    assert OwnReading()._no_call_without == ()
    assert OwnReading().parse('<call>{"name": "f", "arguments": {}}</call>')[1]
    assert UpstreamWay()._no_call_without == ()
    assert Qwen3CoderParser()._no_call_without == ("<tool_call>", "<function=")
    assert Qwen3CoderParser()._no_call_in_parse == ("<function=",)
    invoke = CustomXmlParser(XmlLayout(call_tags=("invoke",)))
    assert invoke._no_call_without == invoke._no_call_in_parse == ("<invoke>",)
    call = "<invoke><parameter=tool_name>f</parameter><parameter=arguments>{}</parameter></invoke>"
    assert invoke.parse(call)[1] and CustomXmlParser().parse(call)[1] is None

    class CustomOwn(CustomXmlParser):
        def _parse(self, text, tools):
            return super()._parse(text.replace("<call>", "<tool_use>"), tools)

    assert CustomOwn()._no_call_without == ()


_DSML_PIECES = ["<", "</", "｜", "|", " ", "\t", "DSML", "tool", "_", "▁", "calls", "call", "begin", "end", ">",
                "invoke", "x"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_DSML_PIECES), max_size=30))
def test_deepseek_v4_skips_the_rewrite_only_when_it_would_change_nothing(pieces):
    """deepseek_v4 rewrites other DSML spellings into the canonical one with a Python call per tag; it skips
    that pass when one search finds no tag the rewrite would change, which must then be a no-op."""
    from hermes_envs.parsers.deepseek_v4 import _REWRITTEN, _SPELLINGS, _canonical

    text = "".join(pieces)
    for probe in (text, "<｜DSML｜" + text, "</｜DSML｜" + text, "<｜DSML｜tool_calls_begin｜>" + text):
        if _REWRITTEN.search(probe) is None:
            assert _SPELLINGS.sub(_canonical, probe) == probe


def test_a_subclass_of_an_upstream_way_parser_keeps_its_parse():
    class UpstreamWay(HermesParser):
        def parse(self, text, tools=None):
            return "mine", None

    class Below(UpstreamWay):
        pass

    assert Below()._no_call_without == ()
    assert Below().parse("plain") == ("mine", None)
    assert Below().parse_detailed("plain").content == "mine"


def test_the_fast_parse_set_on_a_class_does_not_move_its_definition_site():
    """The registry finds a class's file from its own methods: the fast parse set on it lives in _engine.py."""
    import os

    from hermes_envs._definitions import definition_site

    class Tagged(JsonTaggedParser):
        start_tag = "<call>"
        end_tag = "</call>"

    assert "parse" in vars(Tagged)
    assert definition_site(Tagged)[0] == os.path.realpath(__file__)
