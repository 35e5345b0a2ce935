"""Qwen3-Coder (and Qwen3.5): ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>``,
read by the shared XML-ish reader of :mod:`hermes_envs.parsers.xml_params`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hermes_envs.parsers._types import ToolCallLike
from hermes_envs.parsers._xml_scan import TOOL_CALL, TOOL_CALL_END, RealStarts, Starts, check_name
from hermes_envs.parsers.base import call_parts, join_content, register_parser
from hermes_envs.parsers.schema_typing import render_value
from hermes_envs.parsers.xml_params import XmlParamsParser

__all__ = ["Qwen3CoderParser"]

# ``head`` at a real call start, reading at most _SHORT characters of the name (group "long": a longer name)
_SHORT = 256
_NAME = rf"<function=(?:[^>\n]{{0,{_SHORT}}}>|(?P<long>[^>\n]{{{_SHORT + 1}}}))"
_WRAPPED = re.compile(re.escape(TOOL_CALL) + r"\s*" + _NAME)
_BARE = re.compile(_NAME)


@register_parser("qwen3_coder")
class Qwen3CoderParser(XmlParamsParser):
    """Qwen3-Coder (and Qwen3.5) XML function calls."""

    head = re.compile(r"\s*<function=([^>\n]*)>")
    head_open = re.compile(r"\s*<function=")
    start_check = head
    param_open = re.compile(r"<parameter=([^>\n]*)>")
    open_needle = "<parameter="
    tolerate_missing_close = True
    bare_start = "<function="
    call_needle = "<function="
    value_close = "</parameter>"
    call_close = "</function>"
    strip_newline = True
    name_ends = ">\n"  # a name runs to the first of these characters, and must end with ">"

    def real_starts(self, text: str, needle: str) -> Starts:
        """Real call starts (:meth:`real_call_at`) found by the regex engine, a name longer than the patterns
        read being checked by one cached forward search for its end: run at each of thousands of ``<function=``
        openings whose name never ends (no ``>`` or newline follows), ``head`` read the rest of the text from
        each one (quadratic)."""
        return RealStarts(text, needle, _WRAPPED if needle == TOOL_CALL else _BARE, self.name_ends)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = []
        for _, name, args in map(call_parts, tool_calls):
            check_name(self.name, "function name", name, ">\n")
            lines = [TOOL_CALL, f"<function={name}>"]
            for key, value in args.items():
                check_name(self.name, "parameter name", key, ">\n")
                lines += [f"<parameter={key}>", render_value(value), "</parameter>"]
            lines += ["</function>", TOOL_CALL_END]
            blocks.append("\n".join(lines))
        return join_content(content, "\n".join(blocks))
