"""Kimi K2: ``<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>ARGS
<|tool_call_end|>...<|tool_calls_section_end|>``. The call id keeps Kimi's ``functions.NAME:IDX`` spelling; the
name is everything between ``functions.`` and the last ``:IDX`` (dots and dashes kept: ``functions.mcp.web-search:2``
names ``mcp.web-search``, where upstream keeps only ``mcp``). A call whose id lacks ``:IDX``
(``functions.get_weather.0``) is not read, as upstream; it is reported in ``errors``."""

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
)

__all__ = ["KimiK2Parser"]

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
CALL_END = "<|tool_call_end|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"

_HEAD = re.compile(r"\s*([^\s<]+?)\s*" + re.escape(ARGUMENT_BEGIN))
_ID = re.compile(r"(?:functions\.)?(.+):(\d+)")
_PLAIN = re.compile(r"\s*" + re.escape(CALL_BEGIN) + _HEAD.pattern + r"\s*(?=\{)")
_TAIL = re.compile(r"\s*" + re.escape(CALL_END))


def name_from_id(call_id: str) -> str:
    """``functions.get_weather:0`` -> ``get_weather`` (an id without ``:IDX`` is the name itself)."""
    match = _ID.fullmatch(call_id)
    if match is not None:
        return match.group(1)
    return call_id.removeprefix("functions.")


@register_parser("kimi_k2")
class KimiK2Parser(SectionedJsonParser):
    """Kimi K2 / K2 Thinking tool calls."""

    section_begin = SECTION_BEGIN
    section_begin_alts = ("<|tool_call_section_begin|>",)  # the singular spelling vLLM also accepts
    section_end = SECTION_END
    call_begin = CALL_BEGIN
    call_end = CALL_END
    plain_head = _PLAIN
    plain_tail = _TAIL

    def _plain_name(self, head: re.Match[str]) -> tuple[str, str | None] | None:
        call_id = head.group(1)
        match = _ID.fullmatch(call_id)
        return None if match is None else (match.group(1), call_id)

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        head = _HEAD.match(text, pos)
        if head is None:
            raise ValueError(f"expected functions.NAME:IDX{ARGUMENT_BEGIN}; got {excerpt(text, pos)}")
        call_id = head.group(1)
        match = _ID.fullmatch(call_id)
        if match is None:  # vLLM and SGLang skip such a call too: the template always writes ``:IDX``
            raise ValueError(f"the call id should look like functions.NAME:IDX; got {call_id!r}")
        name = match.group(1)
        args, end = self._json_arguments(text, head.end(), memo)
        return name, args, call_id, end

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = []
        for index, (call_id, name, args) in enumerate(map(call_parts, tool_calls)):
            if not name or any(c.isspace() or c == "<" for c in name):
                raise ParserError(f"a kimi tool name should have no whitespace or '<'; got {name!r}.")
            if call_id is None or name_from_id(call_id) != name or _ID.fullmatch(call_id) is None:
                call_id = f"functions.{name}:{index}"
            blocks.append(f"{CALL_BEGIN}{call_id}{ARGUMENT_BEGIN}{dumps(args)}{CALL_END}")
        return join_content(content, SECTION_BEGIN + "".join(blocks) + SECTION_END, "")
