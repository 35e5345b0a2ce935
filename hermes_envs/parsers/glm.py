"""GLM-4.5/4.6 and GLM-4.7: ``<tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value></tool_call>``,
read by the shared XML-ish reader of :mod:`hermes_envs.parsers.xml_params`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import ClassVar

from hermes_envs.parsers._types import ToolCallLike
from hermes_envs.parsers._xml_scan import TOOL_CALL, TOOL_CALL_END, RealStarts, Starts, check_name
from hermes_envs.parsers.base import call_parts, join_content, register_parser
from hermes_envs.parsers.schema_typing import render_value
from hermes_envs.parsers.xml_params import XmlParamsParser

__all__ = ["Glm45Parser", "Glm47Parser"]


@register_parser("glm45")
class Glm45Parser(XmlParamsParser):
    """GLM-4.5 / 4.6: ``<tool_call>NAME`` then ``<arg_key>``/``<arg_value>`` pairs, one per line."""

    # a name ends at whitespace, a tag, a JSON body, or a literal backslash-n (SGLang's raw form)
    head = re.compile(r"\s*((?:[^\s<{\\]|\\(?!n))+)")
    start_check = re.compile(r"\s*(?:[^\s<{\\]|\\(?!n))+(?:\s|\\n)*(?:<arg_key>|</tool_call>|\{)")
    param_open = re.compile(r"<arg_key>([^<]*)</arg_key>(?:\s|\\n)*<arg_value>")
    open_needle = "<arg_key>"
    value_close = "</arg_value>"
    call_close = TOOL_CALL_END
    decode_untyped = True
    literal_newlines = True
    separator_required = True
    schema_narrows_keys = False
    newline: ClassVar[str] = "\n"
    # a real call start (see real_call_at) as one pattern: <tool_call> then what start_check wants after it
    real_start: ClassVar[re.Pattern[str]] = re.compile(re.escape(TOOL_CALL) + f"(?:{start_check.pattern})")

    def real_starts(self, text: str, needle: str) -> Starts:
        """Real call starts found by the regex engine: degenerate output holds tens of thousands of
        ``<tool_call>`` mentions, and checking each one in Python cost most of the parse."""
        if needle == TOOL_CALL:
            return RealStarts(text, needle, self.real_start)
        return super().real_starts(text, needle)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        nl = self.newline
        blocks = []
        for _, name, args in map(call_parts, tool_calls):
            check_name(self.name, "function name", name, "<{", spaces=False)
            parts = [f"{TOOL_CALL}{name}"]
            for key, value in args.items():
                check_name(self.name, "parameter name", key, "<")
                parts.append(f"<arg_key>{key}</arg_key>{nl}<arg_value>{render_value(value)}</arg_value>")
            parts.append(TOOL_CALL_END)
            blocks.append(nl.join(parts))
        return join_content(content, "\n".join(blocks))


@register_parser("glm47")
class Glm47Parser(Glm45Parser):
    """GLM-4.7: the GLM-4.5 layout without the newlines (the parser accepts either)."""

    newline = ""
    separator_required = False  # vLLM's GLM-4.7 reader takes <tool_call>NAME</tool_call>
