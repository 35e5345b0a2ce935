"""DeepSeek V3 and V3.1 tool calls (special tokens with the fullwidth bar ``｜`` and the block ``▁``).

V3:   ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\nARGS\\n```<｜tool▁call▁end｜>``
V3.1: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>``
Both close the section with ``<｜tool▁calls▁end｜>``. The JSON is read with a decoder, so an argument holding
````` ``` ````` or a marker does not end the call early. Each parser also reads the other's call spelling (a
model served with the neighbouring parser name is common), and V3's ```json fence is optional.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hermes_envs.parsers._types import ToolCallLike
from hermes_envs.parsers.base import (
    JsonMemo,
    ParserError,
    SectionedJsonParser,
    call_parts,
    dumps,
    excerpt,
    join_content,
    register_parser,
    skip_ws,
)

__all__ = ["DeepSeekV3Parser", "DeepSeekV31Parser"]

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"

_V3_HEAD = re.compile(
    r"[ \t]*([^<\n]*?)[ \t]*" + re.escape(SEP) + r"[ \t]*([^\r\n<`]*?)[ \t]*(?:\r?\n|(?=`)|(?=\{))"
)
_V31_HEAD = re.compile(r"\s*([^<\n]*?)\s*" + re.escape(SEP))
_FENCE_OPEN = re.compile(r"```[A-Za-z]*")
_CALL = r"\s*" + re.escape(CALL_BEGIN)
_V3_PLAIN = re.compile(
    _CALL
    + r"[ \t]*[^<\n]*?[ \t]*"
    + re.escape(SEP)
    + r"[ \t]*([^\r\n<`{]+?)[ \t]*\r?\n\s*```[A-Za-z]*\s*(?=\{)"
)
_V3_TAIL = re.compile(r"\s*```\s*" + re.escape(CALL_END))
_V31_PLAIN = re.compile(_CALL + r"\s*([^<\n]*?)\s*" + re.escape(SEP) + r"\s*(?=\{)")
_V31_TAIL = re.compile(r"\s*" + re.escape(CALL_END))


class _DeepSeekBase(SectionedJsonParser):
    section_begin = CALLS_BEGIN
    section_end = CALLS_END
    call_begin = CALL_BEGIN
    call_end = CALL_END

    def _v3_arguments(
        self, text: str, at: int, name: str, memo: JsonMemo
    ) -> tuple[str, str, str | None, int]:
        """The JSON arguments at ``at``, optionally inside a ```json fence (closed unless the text ends)."""
        at = skip_ws(text, at)
        fence = _FENCE_OPEN.match(text, at)
        if fence is not None:
            at = fence.end()
        args, end = self._json_arguments(text, at, memo)
        if fence is not None:
            close = skip_ws(text, end)
            if close + 3 > memo.reach:  # what was read after the JSON (see reading_copies)
                memo.reach = close + 3
            if text.startswith("```", close):
                end = close + 3
            elif "```".startswith(text[close:]):  # output cut inside the closing fence: the JSON is complete
                end = len(text)
            elif close < len(text):
                raise ValueError(
                    f"the ```json block of {name!r} should close after the JSON; got {excerpt(text, close)}"
                )
        return name, args, None, end


@register_parser("deepseek_v3")
class DeepSeekV3Parser(_DeepSeekBase):
    """DeepSeek V3 / R1: a type, the name, then the arguments in a ```json fence."""

    plain_head = _V3_PLAIN
    plain_tail = _V3_TAIL

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        head = _V3_HEAD.match(text, pos)
        if head is None or not head.group(2):
            short = _V31_HEAD.match(text, pos)  # the V3.1 spelling NAME<｜tool▁sep｜>ARGS: accepted too
            if (
                short is not None
                and short.group(1)
                and text.startswith(("{", "```"), skip_ws(text, short.end()))
            ):
                return self._v3_arguments(text, short.end(), short.group(1), memo)
            raise ValueError(f"expected TYPE{SEP}NAME then a newline; got {excerpt(text, pos)}")
        return self._v3_arguments(text, head.end(), head.group(2), memo)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = []
        for _, name, args in map(call_parts, tool_calls):
            if "\n" in name or "<" in name:
                raise ParserError(f"a deepseek tool name should not contain newlines or '<'; got {name!r}.")
            blocks.append(f"{CALL_BEGIN}function{SEP}{name}\n```json\n{dumps(args)}\n```{CALL_END}")
        return join_content(content, CALLS_BEGIN + "\n".join(blocks) + CALLS_END, "")


@register_parser("deepseek_v3_1", "deepseek_v31")
class DeepSeekV31Parser(_DeepSeekBase):
    """DeepSeek V3.1: ``NAME<｜tool▁sep｜>ARGS`` per call."""

    plain_head = _V31_PLAIN
    plain_tail = _V31_TAIL

    def _plain_name(self, head: re.Match[str]) -> tuple[str, str | None] | None:
        return (head.group(1), None) if head.group(1) else None

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        head = _V31_HEAD.match(text, pos)
        if head is None or not head.group(1):
            raise ValueError(f"expected NAME{SEP}ARGS; got {excerpt(text, pos)}")
        # ARGS may also be a JSON-encoded string ("{\"x\": 1}"), decoded once like everywhere else
        if not text.startswith(("{", "```", '"'), skip_ws(text, head.end())):
            long = _V3_HEAD.match(text, pos)  # the V3 spelling TYPE<｜tool▁sep｜>NAME + ```json: accepted too
            if long is not None and long.group(2):
                return self._v3_arguments(text, long.end(), long.group(2), memo)
        return self._v3_arguments(text, head.end(), head.group(1), memo)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = []
        for _, name, args in map(call_parts, tool_calls):
            if "\n" in name or "<" in name:
                raise ParserError(f"a deepseek tool name should not contain newlines or '<'; got {name!r}.")
            blocks.append(f"{CALL_BEGIN}{name}{SEP}{dumps(args)}{CALL_END}")
        return join_content(content, CALLS_BEGIN + "".join(blocks) + CALLS_END, "")
