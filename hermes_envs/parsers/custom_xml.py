"""Tool calls in an XML layout the user declares; by default the one upstream hermes-agent's ``custom_xml`` reads::

    <tool_use>
    <parameter=tool_name>web_search</parameter>
    <parameter=arguments>{"query": "..."}</parameter>
    </tool_use>

(also wrapped in ``<tool_call>...</tool_call>``, and with ``name`` for ``tool_name``). A layout is declared with
:class:`XmlLayout`: the call elements, the parameter tag spelling, which parameter names the tool, and whether the
arguments are one JSON parameter or one parameter each. ``custom_xml_format("my_fmt", XmlLayout(...))`` registers
a parser for it, so ``tool_call_parser="my_fmt"`` works wherever a parser name is taken (the env config, the agent
loop, Phase 2's ManagedServer, HC801).

Values end at the first parameter close tag, calls at the first call close tag after their parameters: a user
layout has no structure to disambiguate more, so declare tags that cannot occur in values.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
from collections.abc import Iterable

from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._json import JsonMemo
from hermes_envs.parsers._scan import CONTEXT_MARKERS, CharsFinder, PatternFinder
from hermes_envs.parsers._types import JSONObject, ToolCallLike, ToolSchema
from hermes_envs.parsers.base import (
    Finder,
    ParserError,
    ParseResult,
    ToolCallParser,
    arguments_to_json,
    call_parts,
    dumps,
    excerpt,
    finish,
    join_content,
    register_parser,
    skip_ws,
)
from hermes_envs.parsers.schema_typing import ToolSchemas, convert_value, lookup, render_value

__all__ = ["CustomXmlParser", "XmlLayout", "custom_xml_format"]


@dataclasses.dataclass(frozen=True)
class XmlLayout:
    """A declared tag layout.

    ``call_tags``: element names around one call (the first is rendered; ``<tool_call>`` around one of them is
    accepted too). ``param_open``: the parameter opening tag with ``{key}`` where the name goes; ``param_close``
    its closing tag. ``name_keys``: the parameters that name the tool (the first is rendered). ``arguments_key``:
    the parameter holding the arguments as JSON, or None when every other parameter is one argument (typed by the
    tool schema when ``tools`` is given, else read as JSON when it is JSON).
    """

    call_tags: tuple[str, ...] = ("tool_use", "tool_call")
    param_open: str = "<parameter={key}>"
    param_close: str = "</parameter>"
    name_keys: tuple[str, ...] = ("tool_name", "name")
    arguments_key: str | None = "arguments"

    def __post_init__(self) -> None:
        problems = []
        if not self.call_tags or not all(
            isinstance(t, str) and re.fullmatch(r"[\w.:-]+", t) for t in self.call_tags
        ):
            problems.append(f"call_tags should be XML element names; got {self.call_tags!r}")
        if self.param_open.count("{key}") != 1 or self.param_open.startswith("{key}"):
            problems.append(
                f"param_open should hold '{{key}}' once, after a literal start; got {self.param_open!r}"
            )
        if not self.param_close:
            problems.append("param_close should be a non-empty tag")
        if not self.name_keys:
            problems.append("name_keys should name at least one parameter")
        if problems:
            raise ParserError(
                f"the custom_xml layout {'; '.join(problems)}. Fix: declare XmlLayout(...) again."
            )


@dataclasses.dataclass
class _Reading:
    """One parse's reading state besides its :class:`Scan`: the searches for closing tags, the tool schemas, the
    first call's position, and the search that skips mentions of the tags in bulk (built at the first one)."""

    schemas: ToolSchemas
    several: bool  # another call tag is in the text (an inner call element may follow a tag)
    value_closes: Finder
    call_closes: dict[str, Finder]
    key_ends: CharsFinder | None
    first: int = -1
    candidates: list[tuple[PatternFinder, str]] | None = None


class CustomXmlParser(ToolCallParser):
    """Calls in a user-declared XML layout (see :class:`XmlLayout`; the default is upstream's)."""

    layout: XmlLayout = XmlLayout()  # (an instance given its own layout keeps it: see __init__)
    #: Degenerate output (a looping model's thousands of tag mentions, or copies of one call) is skipped in bulk;
    #: False reads each repeat one by one, as the general reading does: same result, slower on such output (for
    #: checking the shortcut against the reading it stands for).
    skip_repeats: bool = True

    def __init__(self, layout: XmlLayout | None = None) -> None:
        if layout is not None:
            self.layout = layout
        lay = self.layout
        before, after = lay.param_open.split("{key}")
        self._open_lit = before
        self._key_then = re.compile(r"([^\n<>]*?)" + re.escape(after)) if after else re.compile(r"([^\s<>]+)")
        # a key ends where ``after`` starts; when that is a newline, '<' or '>' (the default '>'), only at the first of
        # them: found by str.find (see _read_key) instead of the regex engine stepping over every character
        self._key_end = after if after and after[0] in "\n<>" else None
        # Every call, and every problem reported, holds a call's close tag, the parameter close tag or a parameter
        # opening whose key ends (see _params): a text holding none is all mentions, answered by these searches at
        # C speed instead of reading each (a looping model's unfinished openings, markers between code fences).
        # Only where the opening holds a character that ends keys: each search then stops at the next opening.
        self._no_call_unless: tuple[tuple[str, ...], re.Pattern[str]] | None = (
            (
                (lay.param_close, *(f"</{t}>" for t in lay.call_tags)),
                # a key that ends within 256 characters (group 1), or a longer run (checked by str.find): each
                # opening costs at most 257 steps of the regex engine, never a step back over a long run
                re.compile(re.escape(before) + r"[^\n<>]{0,256}+(?:(" + re.escape(after) + r")|[^\n<>])"),
            )
            if self._key_end is not None and any(c in before for c in "\n<>")
            else None
        )
        self._opens = tuple(f"<{t}>" for t in lay.call_tags)
        self._closes = {f"<{t}>": f"</{t}>" for t in lay.call_tags}
        if (
            layout is not None
            and type(self)._no_call_in_parse
            and self._opens != type(self)._no_call_in_parse
        ):
            # another layout than the class's: its own markers, and the parse that reads them from the instance
            self._no_call_without = self._no_call_in_parse = self._opens
            self.parse = types.MethodType(ToolCallParser.parse, self)  # type: ignore[method-assign]
        # what must follow an opening tag for it to start a call rather than be a mention (a superset: a close tag,
        # or a parameter opening, with its key unless _read_key finds keys by str.find; an inner call tag may come
        # first): see _mention_skipper. (The key's lazy pattern stepped over a long run of other characters after
        # every opening: 14 ms per 100 KB of '[' after one.)
        inner = "|".join(map(re.escape, self._opens))
        key = "" if self._key_end else f"(?:{self._key_then.pattern})"
        self._candidates = {
            o: re.compile(re.escape(o) + rf"\s*(?:(?:{inner})\s*)?(?:</|{re.escape(before)}{key})")
            for o in self._opens
        }

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        return tuple(f"<{t}>" for t in cls.layout.call_tags)  # every call starts with one of them

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        if self._only_mentions(text):
            return ParseResult(text, None)
        openings = tuple(o for o in self._opens if o in text)
        # copies of a call are built, not read, with one call tag in the text only (one marker search)
        scan = Scan(text, openings, replay=self.skip_repeats and len(openings) == 1)
        if scan.first == -1:
            return ParseResult(text, None)
        reading = _Reading(
            ToolSchemas(tools),
            len(openings) > 1,
            Finder(text, self.layout.param_close),
            {o: Finder(text, c) for o, c in self._closes.items()},
            CharsFinder(text, "\n<>") if self._key_end else None,
        )
        for at in scan.segments():
            scan.resume(self._read(scan, reading, at))
        return finish(text, max(reading.first, 0), scan.calls, scan.errors)

    def _read(self, scan: Scan, reading: _Reading, at: int) -> int:
        """Read the call (or mention) at the call tag at ``at``; return where the next tag to read is (-1: none)."""
        text, errors = scan.text, scan.errors
        tag = next(o for o in self._opens if text.startswith(o, at))
        body = skip_ws(text, at + len(tag))
        # <tool_call><tool_use>...</tool_use></tool_call>: the inner element is the call
        if reading.several:
            inner = next((o for o in self._opens if o != tag and text.startswith(o, body)), None)
            if inner is not None:
                tag, body = inner, skip_ws(text, body + len(inner))
        params, end, problem = self._params(
            text, body, tag, reading.value_closes, reading.call_closes[tag], reading.key_ends, scan.memo
        )
        if not params and problem is None:  # a mention of the tag, not a call: skip it
            scan.mention()
            return self._after_mention(scan, reading, at)
        if reading.first == -1:
            reading.first = at
        call = None if problem else self._call(params, reading.schemas, scan)
        if problem is not None and errors.room():
            errors.append(f"tool call #{scan.index} should be complete and well formed; {problem}.")
        outer = skip_ws(text, end)
        if text.startswith("</tool_call>", outer) and tag != "<tool_call>":
            end = outer + len("</tool_call>")
        if call is not None:
            scan.call(*call)
            scan.reached(outer + 12)  # (12: the </tool_call> compared at ``outer``)
        return scan.markers.next(end)

    def _after_mention(self, scan: Scan, reading: _Reading, at: int) -> int:
        """The next tag to read after the mention at ``at``: among many mentions, the next that may start a call."""
        if reading.candidates is None:
            reading.candidates = self._mention_skipper(scan.text) if self.skip_repeats else []
        if not reading.candidates:
            return scan.markers.next(at + 1)
        nxt = -1
        for finder, _ in reading.candidates:
            p = finder.find(at + 1)
            if p != -1 and (nxt == -1 or p < nxt):
                nxt = p
        return nxt

    def _only_mentions(self, text: str) -> bool:
        """True when no call tag in ``text`` can start a call or a reported problem (see ``_no_call_unless``)."""
        if self._no_call_unless is None or not self.skip_repeats:
            return False
        closes, key = self._no_call_unless
        # (each string searched for only when one character of it is in the text: a search for one character is
        # ~50x faster than one for a string, on 100 KB of a looping model's openings that hold neither)
        if any(c[1:2] in text and c in text for c in closes):
            return False
        ends: CharsFinder | None = None
        match = key.search(text) if self._open_lit[-1] in text else None
        while match is not None:
            if match.group(1) is not None:
                return False  # a key that ends: a call, or a call cut off
            if ends is None:
                ends = CharsFinder(text, "\n<>")
            stop = ends.find(match.end())  # where the long key ends
            if stop == -1:
                return True
            if text.startswith(self._key_end, stop):  # type: ignore[arg-type]  # (set: _no_call_unless is)
                return False
            match = key.search(text, stop)
        return True

    def _mention_skipper(self, text: str) -> list[tuple[PatternFinder, str]]:
        """Searches for the openings that may start a call, to skip mentions in bulk; empty when the text holds a
        fence, backtick or reasoning tag. Degenerate output holds tens of thousands of mentions, and stepping from
        each to the next marker cost most of the parse; in text without those, every marker counts, so the next
        opening that may start a call is the next one reading would stop at (the skipped ones are mentions)."""
        if any(m in text for m in ("`", *CONTEXT_MARKERS)):
            return []
        return [(PatternFinder(text, self._candidates[o]), o) for o in self._opens if o in text]

    def _read_key(self, text: str, start: int, key_ends: CharsFinder | None) -> tuple[str, int] | None:
        """(the key as written, where its value starts) of a parameter opening whose key starts at ``start``; None
        when none is there. As ``_key_then.match``; with ``key_ends``, one cached search for the first newline, '<'
        or '>' (the regex read a long run of other characters one step at a time: 40x upstream on 100 KB)."""
        if key_ends is None or self._key_end is None:
            match = self._key_then.match(text, start)
            return None if match is None else (match.group(1), match.end())
        stop = key_ends.find(start)
        if stop == -1 or not text.startswith(self._key_end, stop):
            return None
        return text[start:stop], stop + len(self._key_end)

    def _params(
        self,
        text: str,
        pos: int,
        tag: str,
        value_closes: Finder,
        call_close: Finder,
        key_ends: CharsFinder | None = None,
        memo: JsonMemo | None = None,
    ) -> tuple[list[tuple[str, str]], int, str | None]:
        """The (key, raw value) pairs from ``pos``, where reading stopped, and why the call is broken (or None).
        ``memo`` remembers the JSON arguments that failed to decode: a looping model's call whose parameters run
        through every copy of it fails the same way at each (the decoder's failure costs most of reading one)."""
        memo = JsonMemo() if memo is None else memo
        close_tag = self._closes[tag]
        params: list[tuple[str, str]] = []
        while True:
            pos = skip_ws(text, pos)
            if pos >= len(text):
                return (
                    params,
                    pos,
                    (f"the call was cut off before {close_tag} (end of text)" if params else None),
                )
            if text.startswith(close_tag, pos):
                if not params:
                    return params, pos + len(close_tag), "the call holds no parameter"
                return params, pos + len(close_tag), None
            key = (
                self._read_key(text, pos + len(self._open_lit), key_ends)
                if text.startswith(self._open_lit, pos)
                else None
            )
            if key is None or not key[0].strip():
                if not params:
                    return params, pos, None
                stop = call_close.find(pos)
                resume = len(text) if stop == -1 else stop + len(close_tag)
                return params, resume, f"expected a parameter or {close_tag}; got {excerpt(text, pos)}"
            name, key_end = key[0].strip(), key[1]
            if name == self.layout.arguments_key:
                json_end = self._json_arguments(text, key_end, memo)
                if json_end != -1:
                    params.append((name, text[skip_ws(text, key_end) : json_end]))
                    pos = skip_ws(text, json_end) + len(self.layout.param_close)
                    continue
            close = value_closes.find(key_end)
            if close == -1:
                return params, len(text), f"the value of {name!r} was cut off"
            params.append((name, text[key_end:close]))
            pos = close + len(self.layout.param_close)

    def _json_arguments(self, text: str, key_end: int, memo: JsonMemo) -> int:
        """Where the JSON arguments after the key ending at ``key_end`` end, when they are a JSON object followed
        by the parameter close tag; else -1. Read with the decoder, so a string holding the close tag does not cut
        them; ``memo`` remembers the failures (see :meth:`_params`)."""
        start = skip_ws(text, key_end)
        if not text.startswith("{", start):
            return -1
        reach = memo.reach  # (what the reading looked at is accounted for by the call's end: see _read)
        end, reason = memo.scan(text, start)[1:]
        memo.reach = reach
        if reason is None and text.startswith(self.layout.param_close, skip_ws(text, end)):
            return end
        return -1

    def _call(
        self, params: list[tuple[str, str]], schemas: ToolSchemas, scan: Scan
    ) -> tuple[str, str] | None:
        """The name and JSON arguments of the call ``params`` spell (None: it names no tool), reporting problems."""
        lay = self.layout
        errors, index = scan.errors, scan.index
        values = dict(params)
        name = next((values[k].strip() for k in lay.name_keys if k in values and values[k].strip()), None)
        if name is None:
            if errors.room():
                errors.append(
                    f"tool call #{index} should name its tool in a parameter {' or '.join(lay.name_keys)}; got "
                    f"parameters {[k for k, _ in params]!r}."
                )
            return None
        rest = {k: v for k, v in params if k not in lay.name_keys}
        if lay.arguments_key is not None:
            raw = rest.get(lay.arguments_key, "").strip()
            if not raw:
                return name, "{}"
            try:
                return name, arguments_to_json(json.loads(raw))
            except ValueError:
                # as upstream: arguments that are not a JSON object are kept under "value"
                if errors.room():
                    errors.append(
                        f"tool call #{index} ({name}) arguments should be a JSON object; got {raw[:60]!r} "
                        "(kept as {'value': ...})."
                    )
                return name, dumps({"value": raw})
        props = schemas.properties(name)
        args: JSONObject = {}
        for key, raw in rest.items():
            schema = lookup(props, key)
            if schema is not None:
                value, problem = convert_value(raw, schema, schemas.types_of(schema))
                if problem and errors.room():
                    errors.append(f"tool call #{index} ({name}) parameter {key!r} {problem}.")
            else:
                try:
                    value = json.loads(raw)
                except ValueError:
                    value = raw
            args[key] = value
        return name, dumps(args)

    def render(self, content: str | None, tool_calls: Iterable[ToolCallLike]) -> str:
        lay = self.layout
        tag = lay.call_tags[0]
        blocks = []

        def param(key: str, value: str) -> str:
            if lay.param_close in value and not (key == lay.arguments_key and value.startswith("{")):
                raise ParserError(
                    f"a custom_xml value should not contain {lay.param_close!r}; got {value[:60]!r}."
                )
            return lay.param_open.replace("{key}", key) + value + lay.param_close

        for _, name, args in map(call_parts, tool_calls):
            if name != name.strip() or any(c in name for c in "<>\n"):
                raise ParserError(
                    f"a custom_xml tool name should have no '<', '>', newlines or outer spaces; got {name!r}."
                )
            lines = [f"<{tag}>", param(lay.name_keys[0], name)]
            if lay.arguments_key is not None:
                lines.append(param(lay.arguments_key, dumps(args)))
            else:
                for key, value in args.items():
                    if key in lay.name_keys or not key.strip() or any(c in key for c in "<>\n"):
                        raise ParserError(
                            f"a custom_xml parameter name cannot be written in this layout; got {key!r}."
                        )
                    lines.append(param(key, render_value(value)))
            lines.append(f"</{tag}>")
            blocks.append("\n".join(lines))
        return join_content(content, "\n".join(blocks))


register_parser("custom_xml")(CustomXmlParser)


def custom_xml_format(name: str, layout: XmlLayout, *aliases: str) -> type[CustomXmlParser]:
    """Register a parser called ``name`` (and ``aliases``) for ``layout``; return its class.

    >>> custom_xml_format("my_xml", XmlLayout(call_tags=("call",), arguments_key=None))  # doctest: +SKIP
    """
    cls = type(
        f"CustomXml_{name}", (CustomXmlParser,), {"layout": layout, "name": name, "__module__": __name__}
    )
    return register_parser(name, *aliases)(cls)
