"""Qwen3-Coder (and Qwen3.5): ``<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>``,
read by the shared XML-ish reader of :mod:`hermes_envs.parsers.xml_params`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hermes_envs.parsers._scan import Finder, PatternFinder
from hermes_envs.parsers._xml_scan import TOOL_CALL, TOOL_CALL_END, Starts, check_name
from hermes_envs.parsers.base import call_parts, join_content, register_parser
from hermes_envs.parsers.schema_typing import render_value
from hermes_envs.parsers.xml_params import XmlParamsParser

__all__ = ["Qwen3CoderParser"]

_HEAD_OPEN = re.compile(r"\s*<function=")  # ``head`` up to the name


@register_parser("qwen3_coder")
class Qwen3CoderParser(XmlParamsParser):
    """Qwen3-Coder (and Qwen3.5) XML function calls."""

    head = re.compile(r"\s*<function=([^>\n]*)>")
    start_check = head
    param_open = re.compile(r"<parameter=([^>\n]*)>")
    open_needle = "<parameter="
    tolerate_missing_close = True
    bare_start = "<function="
    call_needle = "<function="
    value_close = "</parameter>"
    call_close = "</function>"
    strip_newline = True
    name_ends = re.compile(r"[>\n]")  # a name runs to the first of these, and must end with ">"

    def _real_starts(self, text: str, needle: str) -> Starts:
        """:meth:`_real_call_at` at each ``needle``, with the end of the name found by one cached forward search:
        the regex, run at each of thousands of ``<function=`` openings whose name never ends (no ``>`` or newline
        follows), read the rest of the text from each one (quadratic)."""
        name_ends = PatternFinder(text, self.name_ends)

        def real(at: int) -> bool:
            head = _HEAD_OPEN.match(text, at + len(TOOL_CALL) if text.startswith(TOOL_CALL, at) else at)
            if head is None:
                return False
            end = name_ends.find(head.end())
            return end != -1 and text[end] == ">"

        return Finder(text, needle, real)

    def render(self, content: str | None, tool_calls: Iterable[Any]) -> str:
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
