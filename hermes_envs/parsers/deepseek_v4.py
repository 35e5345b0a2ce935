"""DeepSeek V3.2 / V4 tool calls in DSML, DeepSeek's markup of special tokens with the fullwidth bar ``｜``::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="city" string="true">Hangzhou</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

``string="true"`` marks a value kept verbatim, ``string="false"`` one written as JSON; a parameter without the
attribute is typed by the tool schema (:mod:`hermes_envs.parsers.schema_typing`), else read as JSON when it is JSON.
The token spelling upstream hermes-agent reads is accepted as well (``<｜DSML｜tool_calls_begin｜>``,
``<｜DSML｜tool_call_begin｜>NAME`` + a ```` ```json ```` block + ``<｜DSML｜tool_call_end｜>``), and so is the ASCII-bar
spelling some providers print (``< | DSML | tool_calls_begin >``). ``render`` writes the invoke markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._scan import CharsFinder, count_repeats
from hermes_envs.parsers._types import JSONObject, JSONValue, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    MAX_ERRORS,
    Finder,
    JsonMemo,
    MarkerScanner,
    ParserError,
    ParseResult,
    Problems,
    ToolCallParser,
    arguments_to_json,
    call_parts,
    excerpt,
    finish,
    join_content,
    register_parser,
    skip_ws,
)
from hermes_envs.parsers.deepseek import _DeepSeekBase
from hermes_envs.parsers.schema_typing import ToolSchemas, convert_value, lookup

__all__ = ["DeepSeekV4Parser"]

BAR = "｜"
CALLS_OPEN = f"<{BAR}DSML{BAR}function_calls>"
CALLS_CLOSE = f"</{BAR}DSML{BAR}function_calls>"
INVOKE_OPEN = f'<{BAR}DSML{BAR}invoke name="'
INVOKE_CLOSE = f"</{BAR}DSML{BAR}invoke>"
PARAM_OPEN = f'<{BAR}DSML{BAR}parameter name="'
PARAM_CLOSE = f"</{BAR}DSML{BAR}parameter>"
# upstream hermes-agent's token spelling
TOKENS_BEGIN = f"<{BAR}DSML{BAR}tool_calls_begin{BAR}>"
TOKENS_END = f"<{BAR}DSML{BAR}tool_calls_end{BAR}>"
TOKEN_CALL_BEGIN = f"<{BAR}DSML{BAR}tool_call_begin{BAR}>"
TOKEN_CALL_END = f"<{BAR}DSML{BAR}tool_call_end{BAR}>"

# Every spelling of a DSML tag opening (ASCII or fullwidth bars, spaces around them, "▁" or " " for "_" in the
# token names) -> the canonical one. The tag's own text keeps its length-independent meaning; the text before the
# first tag is untouched, so the content cut from the canonical text is the original's.
_SPELLINGS = re.compile(
    r"<[ \t]*(/?)[ \t]*[|｜][ \t]*DSML[ \t]*[|｜][ \t]*"
    r"(?:(tool[_▁ ]calls?[_▁ ](?:begin|end))[ \t]*[|｜]?[ \t]*>)?"
)
# A tag opening _SPELLINGS would rewrite into something else: not already ``<｜DSML｜``/``</｜DSML｜`` followed by
# neither a blank nor a token name, nor a token already written ``<｜DSML｜tool_call(s)_begin/end｜>``. A text
# holding none is its own canonical form: one search at C speed instead of a Python call per tag (thousands in
# degenerate output).
# The pattern starts with its literal "<" (the lookaheads after it) so that the regex engine skips to each "<" at
# C speed: with the lookaheads first it tried a match at every character (8 ms per 100 KB, 20x upstream's parse).
_REWRITTEN = re.compile(
    rf"<(?!{BAR}DSML{BAR}tool_calls?_(?:begin|end){BAR}>)"
    rf"(?!/?{BAR}DSML{BAR}(?![ \t]|tool[_▁ ]calls?[_▁ ](?:begin|end)))" + _SPELLINGS.pattern[1:]
)
_NAME = re.compile(r'([^"<>\n]*)"[ \t]*>')
_TOKEN_HEAD = re.compile(r"[ \t]*([^\n<|`{]+?)[ \t]*(?:\r?\n|(?=`)|(?=\{))")
_PARAM = re.compile(r'([^"<>\n]*)"(?:[ \t]+string="(true|false)")?[ \t]*>')


def _canonical(match: re.Match[str]) -> str:
    token = match.group(2)
    if token is not None:
        return f"<{BAR}DSML{BAR}{token.replace('▁', '_').replace(' ', '_')}{BAR}>"
    return f"<{match.group(1)}{BAR}DSML{BAR}"


class _Broken(Exception):
    def __init__(self, reason: str, resume: int) -> None:
        super().__init__(reason)
        self.resume = resume


class _TokenCalls(_DeepSeekBase):
    """Upstream's token spelling: a section of ``tool_call_begin`` NAME + JSON (fenced or not) ``tool_call_end``."""

    name = "deepseek_v4"
    section_begin = TOKENS_BEGIN
    section_end = TOKENS_END
    call_begin = TOKEN_CALL_BEGIN
    call_end = TOKEN_CALL_END
    plain_head = re.compile(
        r"\s*" + re.escape(TOKEN_CALL_BEGIN) + _TOKEN_HEAD.pattern + r"\s*```[A-Za-z]*\s*(?=\{)"
    )
    plain_tail = re.compile(r"\s*```\s*" + re.escape(TOKEN_CALL_END))

    def _plain_name(self, head: re.Match[str]) -> tuple[str, str | None] | None:
        name = head.group(1).strip()
        return (name, None) if name else None

    def _read_call(self, text: str, pos: int, index: int, memo: JsonMemo) -> tuple[str, str, str | None, int]:
        head = _TOKEN_HEAD.match(text, pos)
        if head is None or not head.group(1).strip():
            raise ValueError(f"expected the function name then its JSON arguments; got {excerpt(text, pos)}")
        return self._v3_arguments(text, head.end(), head.group(1).strip(), memo)


_TOKEN_READER = _TokenCalls()  # stateless: one for every parse

# _NAME and _PARAM reading a name of at most _SHORT characters; a longer one is checked by a cached forward search
# for its end before the full pattern runs (see _Reader.match)
_SHORT = 256
_NAME_SHORT = re.compile(_NAME.pattern.replace("*", f"{{0,{_SHORT}}}", 1))
_PARAM_SHORT = re.compile(_PARAM.pattern.replace("*", f"{{0,{_SHORT}}}", 1))
_LONG = re.compile(f'[^"<>\\n]{{{_SHORT + 1}}}')


class _Reader:
    """Reads the invokes of one text: the cached forward searches shared by all of them."""

    __slots__ = ("closes", "invoke_ends", "name_ends", "schemas", "skip_repeats", "text")

    def __init__(self, text: str, schemas: ToolSchemas, skip_repeats: bool = True) -> None:
        self.text = text
        self.schemas = schemas
        self.skip_repeats = skip_repeats
        self.closes = Finder(text, PARAM_CLOSE)
        self.invoke_ends = Finder(text, INVOKE_CLOSE)
        self.name_ends = CharsFinder(text, '"<>\n')

    def match(self, short: re.Pattern[str], full: re.Pattern[str], pos: int) -> re.Match[str] | None:
        """``full.match(text, pos)`` for _NAME or _PARAM (``short``: the same reading at most _SHORT characters of
        the name). A longer name must end with its quote: checked by one cached search first, since the regex
        read the rest of the text from each opening whose name never ends (1.5 ms per 100 KB of brackets)."""
        text = self.text
        head = short.match(text, pos)
        if head is not None or _LONG.match(text, pos) is None:
            return head  # (a name of at most _SHORT characters reads the same either way)
        end = self.name_ends.find(pos)
        return full.match(text, pos) if end != -1 and text[end] == '"' else None

    def resume(self, at: int) -> int:
        """Where reading goes on after a broken invoke: after the next invoke end."""
        end = self.invoke_ends.find(at)
        return len(self.text) if end == -1 else end + len(INVOKE_CLOSE)

    def _cycles(self, pos: int, last: int, problems: int, errors: Problems) -> int:
        """How far to skip from the parameter at ``pos`` whose key the one at ``last`` had: the length of the
        copies of that stretch of parameters that follow (a looping model whose cut call runs every copy into one
        invoke), each read the same way (same values in the same keys, ``problems`` more problems, counted),
        so they are counted instead of read. 0 when none, or when the problems are still being listed."""
        if problems and len(errors) < MAX_ERRORS:
            return 0
        period = pos - last
        # what reading a stretch looks at: its own text, and a name's first _SHORT + 1 characters past its end
        copies = count_repeats(self.text, last, period, pos + 2 * _SHORT)
        errors.dropped += copies * problems
        return copies * period

    def invoke(self, pos: int, errors: Problems, index: int) -> tuple[str, JSONObject, int]:
        """The invoke whose name starts at ``pos``: ``(name, arguments, end)``; raises _Broken."""
        text = self.text
        head = self.match(_NAME_SHORT, _NAME, pos)
        if head is None or not head.group(1).strip():
            raise _Broken(f'expected name="FUNCTION">; got {excerpt(text, pos)}', self.resume(pos))
        name = head.group(1).strip()
        props = self.schemas.properties(name)
        args: JSONObject = {}
        pos = head.end()
        value = DeepSeekV4Parser._value
        # per key, where its last parameter began and the problems met before it (see _cycles)
        starts: dict[str, tuple[int, int]] = {}
        while True:
            pos = skip_ws(text, pos)
            if pos >= len(text):
                raise _Broken(f"{name!r} was cut off before {INVOKE_CLOSE} (end of text)", len(text))
            if text.startswith(INVOKE_CLOSE, pos):
                return name, args, pos + len(INVOKE_CLOSE)
            if not text.startswith(PARAM_OPEN, pos):
                raise _Broken(
                    f"expected a parameter or {INVOKE_CLOSE} in {name!r}; got {excerpt(text, pos)}",
                    self.resume(pos),
                )
            param = self.match(_PARAM_SHORT, _PARAM, pos + len(PARAM_OPEN))
            if param is None or not param.group(1).strip():
                raise _Broken(
                    f'expected a parameter name="KEY"> in {name!r}; got {excerpt(text, pos)}',
                    self.resume(pos),
                )
            key, kind = param.group(1).strip(), param.group(2)
            problems = len(errors) + errors.dropped
            last = starts.get(key)
            starts[key] = (pos, problems)
            if last is not None and self.skip_repeats:
                skipped = self._cycles(pos, last[0], problems - last[1], errors)
                if skipped:
                    pos += skipped
                    continue
            close = self.closes.find(param.end())
            if close == -1:
                raise _Broken(f"the value of {name}.{key} was cut off (no {PARAM_CLOSE})", len(text))
            raw = text[param.end() : close]
            args[key] = value(raw, kind, lookup(props, key), errors, index, name, key)
            pos = close + len(PARAM_CLOSE)


@register_parser("deepseek_v4", "deepseek_dsml", "deepseek_v32")
class DeepSeekV4Parser(ToolCallParser):
    """DeepSeek V3.2 / V4 DSML tool calls (the invoke markup, and upstream's token spelling)."""

    #: A looping model's copies of an invoke, or of a stretch of parameters inside one, are counted in bulk; False
    #: reads each copy, as the general reading does: same result, slower on such output (for checking the shortcut).
    skip_repeats: bool = True

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        return ("DSML",)  # in every spelling of every marker

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        # Text already in the canonical markup (what models trained on DSML and our render write) is read as it
        # is: rewriting other spellings would also rewrite them inside parameter values.
        canonical = (
            text
            if INVOKE_OPEN in text or TOKENS_BEGIN in text or _REWRITTEN.search(text) is None
            else _SPELLINGS.sub(_canonical, text)
        )
        result = self._invokes(canonical, tools)
        if not result.tool_calls and TOKEN_CALL_BEGIN in canonical:
            tokens = _TOKEN_READER.parse_detailed(canonical)
            if tokens.tool_calls:
                result = tokens
        if not result.tool_calls:
            return ParseResult(text, None, result.errors)
        return result

    def _invokes(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        scan = Scan(text, INVOKE_OPEN, replay=self.skip_repeats)
        if scan.first == -1:
            return ParseResult(text, None)
        section = MarkerScanner(text, CALLS_OPEN, think_close=scan.markers.think_close).next(0)
        reader = _Reader(text, ToolSchemas(tools), self.skip_repeats)
        for at in scan.segments():
            try:
                name, args, end = reader.invoke(at + len(INVOKE_OPEN), scan.errors, scan.index)
            except _Broken as exc:
                if scan.errors.room():
                    scan.errors.append(f"tool call #{scan.index} should be complete and well formed; {exc}.")
                end = exc.resume
            else:
                scan.call(name, arguments_to_json(args))
                scan.reached(
                    end
                )  # (copies of this invoke are built from it when the text repeats up to here)
            scan.resume(scan.markers.next(end) if end < len(text) else -1)
        first = section if section != -1 and section < scan.first else scan.first
        return finish(text, first, scan.calls, scan.errors)

    @staticmethod
    def _value(
        raw: str, kind: str | None, schema: JSONValue, errors: Problems, index: int, name: str, key: str
    ) -> JSONValue:
        if kind == "true":
            return raw
        if kind == "false":
            try:
                return json.loads(raw)
            except ValueError:
                if errors.room():
                    errors.append(
                        f'tool call #{index} ({name}) parameter {key!r} is marked string="false" so should be '
                        f"JSON; got {raw[:60]!r} (kept as a string)."
                    )
                return raw
        if schema is not None:
            value, problem = convert_value(raw, schema)
            if problem and errors.room():
                errors.append(f"tool call #{index} ({name}) parameter {key!r} {problem}.")
            return value
        try:
            return json.loads(raw)
        except ValueError:
            return raw

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        blocks = [CALLS_OPEN]
        for _, name, args in map(call_parts, tool_calls):
            _check("function name", name)
            blocks.append(f'{INVOKE_OPEN}{name}">')
            for key, value in args.items():
                _check("parameter name", key)
                if isinstance(value, str):
                    if PARAM_CLOSE in value:
                        raise ParserError(
                            f"a deepseek_v4 string value should not contain {PARAM_CLOSE}; got {value[:60]!r}."
                        )
                    blocks.append(f'{PARAM_OPEN}{key}" string="true">{value}{PARAM_CLOSE}')
                else:
                    written = json.dumps(value, ensure_ascii=False)
                    blocks.append(f'{PARAM_OPEN}{key}" string="false">{written}{PARAM_CLOSE}')
            blocks.append(INVOKE_CLOSE)
        blocks.append(CALLS_CLOSE)
        return join_content(content, "\n".join(blocks), "\n\n")


def _check(what: str, value: str) -> None:
    if not value.strip() or value != value.strip() or any(c in value for c in '"<>\n'):
        raise ParserError(
            f"a deepseek_v4 {what} should be non-empty, without quotes, '<', '>', newlines or outer spaces; "
            f"got {value!r}."
        )
