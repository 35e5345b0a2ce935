"""The reader shared by the formats whose parameters are XML-ish text: qwen3_coder, glm45 and glm47.

Values are raw text, so they may contain anything, including ``</parameter>`` or a whole tool call (models write
such files). A value therefore does not end at the first closing tag but at the first closing tag that the
*structure* confirms: one followed by the opening of a parameter this call has not used yet (a declared one, when
the tool's schema is known), or by the end of the call that is itself followed by the end of the text, another
call, or text with no further value-closing tag before the next call. Each candidate is checked with anchored
matches and cached forward searches, so the scan stays linear. Values are typed by
:mod:`hermes_envs.parsers.schema_typing`.

The formats themselves (their layouts, tags, class attributes and rendering) are in
:mod:`~hermes_envs.parsers.qwen3_coder` and :mod:`~hermes_envs.parsers.glm`; the per-text search state in
:mod:`~hermes_envs.parsers._xml_scan`.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar

from hermes_envs.parsers._engine import Scan
from hermes_envs.parsers._scan import READ_MARGIN, Finder
from hermes_envs.parsers._types import JSONObject, JSONValue, ToolSchema
from hermes_envs.parsers._xml_scan import (
    LOOKAHEAD,
    TOOL_CALL,
    TOOL_CALL_END,
    BrokenCall,
    Starts,
    XmlScan,
    json_or_text,
)
from hermes_envs.parsers.base import (
    ParseResult,
    ToolCallParser,
    arguments_to_json,
    excerpt,
    scan_json_at,
    skip_ws,
)
from hermes_envs.parsers.schema_typing import ToolSchemas, convert_value, lookup

__all__ = ["XmlParamsParser"]
# A function name holding these is a chat template that was printed instead of rendered (`{{ tc.name }}`)
_TEMPLATE = re.compile(r"\{\{|\}\}|\{%|%\}")


class XmlParamsParser(ToolCallParser):
    """Shared reader for the XML-ish formats; subclasses give the tags and the rendering."""

    head: ClassVar[re.Pattern[str]]
    start_check: ClassVar[re.Pattern[str]]  # what must follow <tool_call> for a later call to count as one
    param_open: ClassVar[re.Pattern[str]]
    open_needle: ClassVar[str]  # the literal start of ``param_open``
    value_close: ClassVar[str]
    call_close: ClassVar[str]
    strip_newline: ClassVar[bool] = False
    # a value with no schema to type it is JSON-decoded when it is valid JSON (GLM, as vLLM and SGLang do)
    decode_untyped: ClassVar[bool] = False
    # a call may also start without <tool_call> with this (qwen3_coder: a bare <function=NAME>)
    bare_start: ClassVar[str | None] = None
    call_needle: ClassVar[str] = TOOL_CALL  # what every real call start contains (for forward searches)
    # read a value whose closing tag the model forgot (qwen3_coder does this; see _value_end)
    tolerate_missing_close: ClassVar[bool] = False
    # a literal backslash-n between tags separates like a newline (SGLang's raw GLM output; see Glm45Parser)
    literal_newlines: ClassVar[bool] = False
    # with a schema, only a declared parameter's opening confirms a closing tag (qwen3_coder: file contents often
    # hold `</parameter><parameter=...>`); GLM takes any unused key, or an undeclared one glues values together
    schema_narrows_keys: ClassVar[bool] = True
    # a no-argument call must have whitespace between its name and the call close (glm45, as SGLang)
    separator_required: ClassVar[bool] = False
    # the characters a name in ``head`` and ``param_open`` runs to, the first one met having to be
    # the tag's ">", when the patterns read names that way (qwen3_coder): openings are then checked by one
    # cached forward search instead of re-reading a name that never ends from each of them
    name_ends: ClassVar[str | None] = None
    # ``head`` up to the name (with ``name_ends``: see _head_at)
    head_open: ClassVar[re.Pattern[str] | None] = None
    #: False reads every copy of a looping model's call one by one (the engine neither builds a complete call's
    #: copies nor counts a broken one's): same result, slower on such output; for checking those shortcuts
    #: against the reading they stand for
    skip_repeats: bool = True

    def _untyped_value(self, raw: str) -> JSONValue:
        """A value no schema types: JSON-decoded when ``decode_untyped`` (GLM), else the text as is (vLLM's
        qwen3_coder; upstream hermes-agent's decodes it, see ``environments.tool_call_parsers``)."""
        return json_or_text(raw) if self.decode_untyped else raw

    def _skip(self, text: str, pos: int, scan: XmlScan) -> int:
        """The first position at or after ``pos`` past whitespace (and literal ``\\n`` in a raw-form call)."""
        pos = skip_ws(text, pos)
        if scan.raw:
            while text.startswith("\\n", pos):
                pos = skip_ws(text, pos + 2)
        return pos

    # -- reading ------------------------------------------------------------------------------------------

    def real_call_at(self, text: str, at: int, scan: XmlScan | None = None) -> bool:
        """True when a real call starts at ``at``: ``<tool_call>`` (or the bare start) followed by a head."""
        if text.startswith(TOOL_CALL, at):
            if scan is not None and self.start_check is self.head:
                return self._head_at(text, at + len(TOOL_CALL), scan) is not None
            return self.start_check.match(text, at + len(TOOL_CALL)) is not None
        if self.bare_start is None:
            return False
        return (self.head.match(text, at) if scan is None else self._head_at(text, at, scan)) is not None

    def _head_at(self, text: str, pos: int, scan: XmlScan) -> re.Match[str] | None:
        """``head.match(text, pos)``. With ``name_ends``, a head whose name never ends is turned down by one cached
        forward search first: the regex read (and backtracked over) the rest of the text from each opening."""
        ends = scan.name_ends
        if ends is not None and self.head_open is not None:
            opening = self.head_open.match(text, pos)
            if opening is None:
                return None
            end = ends.find(opening.end())
            if end == -1 or text[end] != ">":
                return None
        return self.head.match(text, pos)

    def real_starts(self, text: str, needle: str) -> Starts:
        """The forward search for real call starts at ``needle`` (each one checked by :meth:`real_call_at`)."""
        return Finder(text, needle, lambda at: self.real_call_at(text, at))

    @classmethod
    def _call_markers(cls) -> tuple[str, ...]:
        # with bare calls, every call (wrapped or not) starts with the bare opening (qwen3_coder's <function=)
        return (TOOL_CALL,) if cls.bare_start is None else (cls.bare_start,)

    @classmethod
    def _report_markers(cls) -> tuple[str, ...]:
        return (TOOL_CALL,) if cls.bare_start is None else (TOOL_CALL, cls.bare_start)

    def _parse(self, text: str, tools: list[ToolSchema] | None) -> ParseResult:
        scan = Scan(
            text,
            TOOL_CALL if self.bare_start is None else (TOOL_CALL, self.bare_start),
            replay=self.skip_repeats,
        )
        if scan.first == -1:  # no marker at all: nothing more to set up
            return ParseResult(text, None)
        tags = XmlScan(text, self)
        scan.first = self._first_call(scan, tags)
        if scan.first == -1:
            return ParseResult(text, None)
        schemas = ToolSchemas(tools)
        for pos in scan.segments():
            scan.resume(self._read_segment(scan, tags, schemas, pos))
        return scan.result()

    def _first_call(self, scan: Scan, tags: XmlScan) -> int:
        """The first call start from the first marker; a mention of the tag in the prose before it ("I will emit a
        <tool_call> block") stays content when a real call follows, else it is read (and reported as broken).
        Later broken calls are read and reported: they are not prose."""
        text, p = scan.text, scan.first
        while p != -1 and not self.real_call_at(text, p, tags):
            real = tags.real_wrapped.find(p + 1)
            bare = tags.real_bare
            b = -1 if bare is None else bare.find(p + 1)
            real = real if b == -1 or (real != -1 and real < b) else b
            if real == -1:
                return p
            p = scan.markers.next(real)
        return p

    def _read_segment(self, scan: Scan, tags: XmlScan, schemas: ToolSchemas, pos: int) -> int:
        """Read the call at the marker at ``pos``; return where the next marker is (-1: none)."""
        text = scan.text
        body = pos + len(TOOL_CALL) if text.startswith(TOOL_CALL, pos) else pos
        try:
            name, args, end = self._read_call(scan, tags, schemas, body)
        except BrokenCall as exc:
            return self._past_broken(scan, tags, pos, exc)
        scan.call(name, arguments_to_json(args))
        if end >= len(text):
            return -1
        nxt = scan.markers.next(end)
        # what this reading looked at, for the engine's copies of it (a looping model): the cached searches and
        # the patterns checked at their answers (a name read to LOOKAHEAD characters); one period more, so the
        # last copy is read, not built
        if nxt > pos:
            seen = max(end, tags.seen(pos), nxt + len(TOOL_CALL)) + LOOKAHEAD + (nxt - pos)
            scan.reached(seen - READ_MARGIN)
        return nxt

    def _past_broken(self, scan: Scan, tags: XmlScan, pos: int, exc: BrokenCall) -> int:
        """Report the broken call at ``pos``, or past the error cap count it and the copies of it a looping model
        wrote after it (the last copy is read); return where the next marker is (-1: none)."""
        text, end = scan.text, exc.resume
        if scan.errors.room():
            scan.errors.append(f"tool call #{scan.index} should be complete and well formed; {exc.reason()}.")
        elif exc.local and end < len(text) and self.skip_repeats:
            # the copies fail the same way one period on (fences and reasoning blocks matter only to the marker
            # search: the engine confirms it where they are about)
            nxt = scan.markers.next(end)
            if nxt > pos:
                upto = max(end, exc.seen, nxt + len(TOOL_CALL)) + LOOKAHEAD + (nxt - pos)
                return scan.broken_copies(pos, nxt, upto, end)[1]
            return nxt
        return scan.markers.next(end) if end < len(text) else -1

    def _read_call(
        self, scan: Scan, tags: XmlScan, schemas: ToolSchemas, pos: int
    ) -> tuple[str, JSONObject, int]:
        """Read the call whose head is at ``pos``: ``(name, arguments, where reading goes on)``; a call that cannot
        be read raises :class:`BrokenCall`."""
        text = scan.text
        name, pos = self._read_head(text, pos, tags)
        props = schemas.properties(name)
        args: JSONObject = {}
        while True:
            pos = skip_ws(text, pos)
            if tags.raw:
                pos = self._skip(text, pos, tags)
            if pos >= len(text):
                raise BrokenCall(
                    lambda me=self, n=name: f"{n!r} was cut off before {me.call_close} (end of text)",
                    len(text),
                )
            opening = self.param_open.match(text, pos)
            if opening is not None:
                pos = self._read_value(scan, tags, schemas, (name, props, args), opening)
                continue
            if text.startswith(self.call_close, pos):
                return name, args, self._after_call_close(text, pos)
            if not args and text[pos] == "{":
                return self._json_body(text, pos, name, tags)
            raise BrokenCall(
                lambda me=self, n=name, t=text, at=pos: (
                    f"expected a parameter or {me.call_close} in {n!r}; got {excerpt(t, at)}"
                ),
                self._recover(text, pos, tags),
                local=not args,
            )

    def _read_head(self, text: str, pos: int, scan: XmlScan) -> tuple[str, int]:
        """The function name of the call whose head is at ``pos``, and where its parameters start."""
        head = self._head_at(text, pos, scan)
        if head is None:
            raise BrokenCall(
                lambda t=text, at=pos: f"expected the function name; got {excerpt(t, at)}",
                self._recover(text, pos, scan),
                local=True,
            )
        name = head.group(1).strip()
        pos = head.end()
        # SGLang's raw GLM form: a literal backslash-n after the name, and between the tags of this call
        scan.raw = self.literal_newlines and text.startswith("\\n", pos)
        if _TEMPLATE.search(name) is not None:
            raise BrokenCall(
                lambda n=name: (
                    f"the function name {n!r} is an unrendered chat-template placeholder, not a call (skipped)"
                ),
                self._recover(text, pos, scan),
                local=True,
            )
        if self.separator_required and text.startswith(self.call_close, pos):
            raise BrokenCall(
                lambda me=self, n=name: (
                    f"{me.name} writes a newline between the function name {n!r} and {me.call_close} "
                    f"(as SGLang's GLM-4.5 reader requires; the glm47 parser reads the compact form)"
                ),
                self._after_call_close(text, pos),
                local=True,
            )
        return name, pos

    def _read_value(
        self,
        scan: Scan,
        tags: XmlScan,
        schemas: ToolSchemas,
        call: tuple[str, JSONObject | None, JSONObject],
        opening: re.Match[str],
    ) -> int:
        """Read the parameter ``opening`` starts into the arguments of ``call`` (its name, its schema's
        properties, the arguments read so far), typed by the schema; return where reading goes on."""
        text, errors = scan.text, scan.errors
        name, props, args = call
        key = opening.group(1).strip()
        start = opening.end()
        close, resume = self._value_end(text, start, args, key, props, tags)
        if close == -1:
            raise BrokenCall(
                lambda me=self, n=name, k=key: f"the value of {n}.{k} was cut off (no {me.value_close})",
                len(text),
            )
        if resume == close and errors.room():
            errors.append(
                f"tool call #{scan.index} ({name}) parameter {key!r} should end with {self.value_close}; "
                f"it was missing (the value was read up to the next tag)."
            )
        raw = text[start:close]
        if self.strip_newline:
            raw = raw[1:] if raw.startswith("\n") else raw
            raw = raw[:-1] if raw.endswith("\n") else raw
        schema = lookup(props, key)
        if schema is not None:
            value, problem = convert_value(raw, schema, schemas.types_of(schema))
        else:
            value, problem = self._untyped_value(raw), None
        if problem and errors.room():
            errors.append(f"tool call #{scan.index} ({name}) parameter {key!r} {problem}.")
        args[key] = value
        return resume

    def _json_body(self, text: str, pos: int, name: str, scan: XmlScan) -> tuple[str, JSONObject, int]:
        """Older outputs put a JSON object after the name instead of parameters; accept it."""
        value, end, reason = scan_json_at(text, pos)
        if reason is None:
            try:
                args = arguments_to_json(value)
            except ValueError as exc:
                reason, end = str(exc), -1
        if reason is not None:
            raise BrokenCall(
                lambda why=reason, at=end: (
                    f"the JSON arguments of {name!r} are invalid ({why}"
                    + (f" at offset {at})" if at != -1 else ")")
                ),
                self._recover(text, pos, scan),
                # the decoder read nothing past a few characters after an "Expecting"/"Invalid" error (JsonMemo)
                local=end != -1 and reason.startswith(("Expecting", "Invalid")),
                seen=end + 9,
            )
        end = skip_ws(text, end)
        if end >= len(text):
            return name, json.loads(args), end
        if not text.startswith(self.call_close, end):
            raise BrokenCall(
                lambda: f"{name!r} should close after its JSON arguments; got {excerpt(text, end)}",
                self._recover(text, end, scan),
                local=True,  # (a decoded value and the text after it: nothing past end + call_close was read)
                seen=end + len(self.call_close),
            )
        return name, json.loads(args), self._after_call_close(text, end)

    def _after_call_close(self, text: str, pos: int) -> int:
        """Position after ``call_close`` at ``pos`` (and after ``</tool_call>`` when that is separate)."""
        pos += len(self.call_close)
        if self.call_close != TOOL_CALL_END:
            nxt = skip_ws(text, pos)
            if text.startswith(TOOL_CALL_END, nxt):
                pos = nxt + len(TOOL_CALL_END)
        return pos

    def _recover(self, text: str, pos: int, scan: XmlScan) -> int:
        """Where to look for the next call after a broken one: after the next call end (either tag), or at the
        next real call start if that comes first (a broken mention must not swallow the real call after it)."""
        end = scan.call_ends.find(pos)
        resume = len(text) if end == -1 else end + len(TOOL_CALL_END)
        if self.call_close != TOOL_CALL_END:  # bare calls have no </tool_call>
            fend = scan.call_closes.find(pos)
            if fend != -1 and fend + len(self.call_close) < resume:
                resume = fend + len(self.call_close)
        real = scan.recover_calls.find(pos)
        if real != -1 and real < resume:
            resume = real
            if self.call_needle != TOOL_CALL:  # a wrapped call: resume at its <tool_call>, not inside it
                wrapped = text.rfind(TOOL_CALL, pos, real)
                if wrapped != -1 and not text[wrapped + len(TOOL_CALL) : real].strip():
                    resume = wrapped
        return resume

    def _call_end_confirmed(self, text: str, at: int, scan: XmlScan) -> bool:
        """Is the ``call_close`` at ``at`` the real end of the call? Yes when what follows it is the end of the
        text, a real next call, or text with no further value-closing tag before the next real call."""
        rest = self._skip(text, self._after_call_close(text, at), scan)
        if rest >= len(text) or self.real_call_at(text, rest, scan):
            return True
        later_close = scan.later_closes.find(rest)
        if later_close == -1:
            return True
        later_call = scan.later_calls.find(rest)
        return later_call != -1 and later_call < later_close

    def _close_confirmed(
        self,
        text: str,
        close: int,
        args: JSONObject,
        key: str,
        props: JSONObject | None,
        scan: XmlScan,
        also: str | None = None,
    ) -> bool:
        """Is the ``value_close`` at ``close`` the real end of a value (see the module docstring)?"""
        nxt = self._skip(text, close + len(self.value_close), scan)
        if nxt >= len(text):
            return True
        opening = self.param_open.match(text, nxt)
        if opening is not None:
            nxt_key = opening.group(1).strip()  # a parameter not used yet (``key`` and ``also`` are in use)
            return (
                nxt_key != key
                and nxt_key != also
                and nxt_key not in args
                and (not props or not self.schema_narrows_keys or nxt_key in props)
            )
        if text.startswith(self.call_close, nxt):
            return self._call_end_confirmed(text, nxt, scan)
        return False

    def _opening_at(self, text: str, at: int, scan: XmlScan) -> re.Match[str] | None:
        """``param_open.match(text, at)`` at an ``open_needle``. With ``name_ends``, an opening whose name never
        ends is turned down by one cached forward search: thousands of them in a row (``<parameter=k`` with no
        ``>`` or newline after it) were each read to the end of the text by the regex (quadratic)."""
        if scan.name_ends is not None:
            end = scan.name_ends.find(at + len(self.open_needle))
            if end == -1 or text[end] != ">":
                return None
        return self.param_open.match(text, at)

    def _forgotten_close(
        self,
        text: str,
        start: int,
        bounds: tuple[int, int],
        args: JSONObject,
        key: str,
        props: JSONObject | None,
        scan: XmlScan,
    ) -> int:
        """Where the value starting at ``start`` ends when the model forgot its closing tag (see
        :meth:`_value_end`), looking before ``bounds`` (the first closing tag, -1: none; where to stop), else -1."""
        first, limit = bounds
        bound = scan.bound_calls.find(start)
        if bound != -1 and bound < limit:
            limit = bound
        op = scan.opens.find(start)
        fc = scan.call_closes.find(start)
        while True:
            op_in = op != -1 and op < limit
            fc_in = fc != -1 and fc < limit
            if op_in and (not fc_in or op < fc):
                opening = self._opening_at(text, op, scan)
                if opening is not None and first != -1:
                    other = opening.group(1).strip()
                    if (
                        other != key
                        and other not in args
                        and (not props or other in props)
                        and self._close_confirmed(text, first, args, other, props, scan, also=key)
                    ):
                        return op
                op = scan.opens.find(op + 1)
            elif fc_in:
                if text[fc - 1 : fc] == "\n" and self._call_end_confirmed(text, fc, scan):
                    return fc
                fc = scan.call_closes.find(fc + 1)
            else:
                return -1

    def _value_end(
        self,
        text: str,
        start: int,
        args: JSONObject,
        key: str,
        props: JSONObject | None,
        scan: XmlScan,
    ) -> tuple[int, int]:
        """Where the value starting at ``start`` really ends, and where reading goes on; ``(-1, -1)`` if nowhere.

        The first confirmed closing tag wins. With ``tolerate_missing_close``, before the first closing tag (and
        before the next real call) a value whose closing tag the model forgot also ends at a parameter opening
        (an unused, declared parameter whose own value closes with a confirmed tag), or at a confirmed call end
        at a line start; reading then goes on at that tag.
        """
        first = scan.closes.find(start)
        # a tag before the first closing tag could be where a forgotten one belonged (no "<": nothing to check)
        limit = len(text) if first == -1 else first
        if self.tolerate_missing_close and text.find("<", start, limit) != -1:
            forgotten = self._forgotten_close(text, start, (first, limit), args, key, props, scan)
            if forgotten != -1:
                return forgotten, forgotten
        # A closing tag followed by an *undeclared* unused parameter is where the value ends only when no declared
        # parameter confirms an earlier end and the value would otherwise run to the end of the call (a file
        # holding `</parameter><parameter=x>` keeps it; an undeclared parameter is not glued into the one before).
        fallback = -1
        close = first
        size = len(self.value_close)
        while close != -1:
            if self._close_confirmed(text, close, args, key, props, scan):
                if fallback != -1 and text.startswith(self.call_close, self._skip(text, close + size, scan)):
                    return fallback, fallback + size
                return close, close + size
            if fallback == -1 and props and self.schema_narrows_keys:
                nxt = self._skip(text, close + size, scan)
                opening = self.param_open.match(text, nxt)
                if opening is not None:
                    other = opening.group(1).strip()
                    if other and other != key and other not in args and other not in props:
                        fallback = close
            close = scan.closes.find(close + size)
        return (fallback, fallback + size) if fallback != -1 else (-1, -1)
