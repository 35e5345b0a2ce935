"""Scripts: what the fake server answers, turn by turn.

A :class:`Script` is an ordered list of :class:`Turn`. Turn *k* (1-based) answers a request whose messages already
hold *k-1* assistant messages, so every concurrent rollout of a group walks the same script independently. A script
may instead hold several keyed sub-scripts (``scripts:`` in YAML): the first whose regex is found in the request's
first user message (the item's prompt) serves that conversation.

YAML/JSON schema (every field optional unless noted)::

    turns:                       # or a bare list of turns at the top level
      - content: "text"          # str or null
        reasoning_content: "..."  # emitted as message.reasoning_content
        tool_calls:
          - name: terminal       # required
            arguments: {command: "ls"}   # mapping, or a JSON string (sent verbatim)
            id: call_1           # optional; generated when absent
        finish_reason: stop     # default: "tool_calls" when tool calls, else "stop"
        match:                   # conditions the request must meet, else it is a miss
          user: "regex"          # searched in the last user message
          tool_results: true     # the last message is (true) / is not (false) a tool result
          tool_result: "regex"   # searched in the tool results since the last assistant message
          tools_offered: [terminal]   # these tools are offered (or true/false: any tools offered)
          temperature: 0.0       # exact, or {min: 0, max: 0.5}
          model: "regex"         # full match on the request's model
        fault: 429               # or {kind: 429, retry_after: 1, times: 1}; see faults.py
        choices:                 # n>1: one entry per choice (cycled); each is a turn without match/fault
          - content: "a"
    scripts:                     # keyed scripts instead of turns
      "What is 6\\*7": {turns: [...]}    # regex searched in the first user message
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_envs.errors import ScriptError

from .faults import Fault, fault_from_obj

__all__ = ["Match", "Script", "ToolCall", "Turn", "load_script"]

_TURN_FIELDS = ("content", "reasoning_content", "tool_calls", "finish_reason", "match", "fault", "choices")
_CALL_FIELDS = ("name", "arguments", "id")
_MATCH_FIELDS = ("user", "tool_results", "tool_result", "tools_offered", "temperature", "model")
_TOP_FIELDS = ("turns", "scripts", "name", "description")
_FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")


# --------------------------------------------------------------------------------------------------------- model
@dataclass
class ToolCall:
    """One scripted tool call. ``arguments`` is kept as the JSON string sent on the wire."""

    name: str
    arguments: str = "{}"
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, str):
            self.arguments = json.dumps(self.arguments, ensure_ascii=False)

    @classmethod
    def from_obj(cls, obj: Any) -> ToolCall:
        if isinstance(obj, ToolCall):
            return obj
        if not isinstance(obj, Mapping):
            raise ScriptError(f"a tool call should be a mapping with name and arguments; got {obj!r}.")
        _validate(obj, "tool_calls[]", None)
        return _tool_call(obj, "tool_calls[]", None)


@dataclass
class Match:
    """Conditions a request must meet for a turn to answer it. ``None`` means "don't care"."""

    user: str | None = None
    tool_results: bool | None = None
    tool_result: str | None = None
    tools_offered: bool | list[str] | None = None
    temperature: float | tuple[float | None, float | None] | None = None
    model: str | None = None

    def is_empty(self) -> bool:
        return all(getattr(self, f) is None for f in _MATCH_FIELDS)

    def mismatches(self, view: RequestView) -> list[str]:
        """Each unmet condition as ``"<field>: expected ...; got ..."``. Empty when the request matches."""
        out: list[str] = []
        if self.user is not None and not re.search(self.user, view.last_user or ""):
            out.append(
                f"user: expected a last user message matching /{self.user}/; got {_short(view.last_user)}"
            )
        if self.tool_results is not None and view.last_is_tool != self.tool_results:
            want = "a tool result" if self.tool_results else "not a tool result"
            out.append(f"tool_results: expected the last message to be {want}; got role {view.last_role!r}")
        if self.tool_result is not None and not any(
            re.search(self.tool_result, t) for t in view.recent_tool_results
        ):
            out.append(
                f"tool_result: expected a tool result matching /{self.tool_result}/ since the last assistant "
                f"message; got {[_short(t, 80) for t in view.recent_tool_results]!r}"
            )
        if self.tools_offered is not None:
            offered = view.tools_offered
            if isinstance(self.tools_offered, bool):
                if bool(offered) != self.tools_offered:
                    want = "some tools" if self.tools_offered else "no tools"
                    out.append(f"tools_offered: expected {want} offered; got {offered!r}")
            else:
                missing = [t for t in self.tools_offered if t not in offered]
                if missing:
                    out.append(f"tools_offered: expected {self.tools_offered!r} offered; got {offered!r}")
        if self.temperature is not None:
            t = view.temperature
            if isinstance(self.temperature, tuple):
                lo, hi = self.temperature
                ok = t is not None and (lo is None or t >= lo) and (hi is None or t <= hi)
                want = " and ".join(
                    x
                    for x in (
                        f"at least {lo}" if lo is not None else "",
                        f"at most {hi}" if hi is not None else "",
                    )
                    if x
                )
            else:
                ok = t is not None and float(t) == float(self.temperature)
                want = f"{self.temperature}"
            if not ok:
                out.append(f"temperature: expected {want}; got {t!r}")
        if self.model is not None and not re.fullmatch(self.model, view.model or ""):
            out.append(f"model: expected a model matching /{self.model}/; got {view.model!r}")
        return out


@dataclass
class Turn:
    """One scripted assistant reply (and, optionally, the conditions and fault that go with it)."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning_content: str | None = None
    finish_reason: str | None = None
    match: Match | None = None
    fault: Fault | None = None
    choices: list[Turn] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tool_calls = [ToolCall.from_obj(tc) for tc in (self.tool_calls or [])]
        if isinstance(self.match, Mapping):
            self.match = _match(self.match, "match", None)
        if self.fault is not None and not isinstance(self.fault, Fault):
            self.fault = fault_from_obj(self.fault)
        self.choices = [c if isinstance(c, Turn) else Turn.from_obj(c) for c in (self.choices or [])]

    @classmethod
    def from_obj(cls, obj: Any) -> Turn:
        """Build a turn from a Turn, a mapping in the script schema, or a plain string (the content)."""
        if isinstance(obj, Turn):
            return obj
        if isinstance(obj, str):
            return cls(content=obj)
        if not isinstance(obj, Mapping):
            raise ScriptError(f"a turn should be a mapping (content / tool_calls ...); got {obj!r}.")
        _validate(obj, "turn", None)
        return _turn(obj, "turn", None)

    @property
    def resolved_finish_reason(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")

    def describe(self) -> str:
        """A one-line summary used in miss messages."""
        parts = []
        if self.content is not None:
            parts.append(f"content={_short(self.content, 60)}")
        for tc in self.tool_calls:
            parts.append(f"tool_call {tc.name}({_short(tc.arguments, 60)})")
        if self.match is not None and not self.match.is_empty():
            conds = {f: getattr(self.match, f) for f in _MATCH_FIELDS if getattr(self.match, f) is not None}
            parts.append(f"match={conds}")
        return ", ".join(parts) or "empty reply"


@dataclass
class Script:
    """Ordered turns, or keyed sub-scripts (``keyed``: list of (regex, Script)) chosen by the prompt."""

    turns: list[Turn] = field(default_factory=list)
    keyed: list[tuple[str, Script]] = field(default_factory=list)
    source: str = "<python>"

    def __post_init__(self) -> None:
        self.turns = [Turn.from_obj(t) for t in (self.turns or [])]
        if isinstance(self.keyed, Mapping):
            self.keyed = list(self.keyed.items())
        self.keyed = [(k, v if isinstance(v, Script) else Script.from_obj(v)) for k, v in self.keyed]
        for k, _ in self.keyed:
            try:
                re.compile(k)
            except re.error as e:
                raise ScriptError(
                    f"{self.source}: key {k!r} should be a valid regex; got error {e}."
                ) from None

    @classmethod
    def from_obj(cls, obj: Any, source: str = "<python>") -> Script:
        """Build from a Script, a list of turns, a mapping in the file schema, or a path to a YAML/JSON file."""
        if isinstance(obj, Script):
            return obj
        if isinstance(obj, (str, Path)):
            return load_script(obj)
        return _script(obj, source)

    def __len__(self) -> int:
        return len(self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The script in the file schema (round-trips through :func:`load_script`)."""
        if self.keyed:
            return {"scripts": {k: s.to_dict() for k, s in self.keyed}}
        return {"turns": [_turn_to_dict(t) for t in self.turns]}


# ----------------------------------------------------------------------------------------------- request view
class RequestView:
    """The parts of a chat request that turn selection and match conditions look at."""

    __slots__ = ("body", "messages", "prompt_text")

    def __init__(self, body: Mapping[str, Any], prompt_text: str | None = None) -> None:
        self.body = body
        msgs = body.get("messages")
        self.messages: list[Any] = msgs if isinstance(msgs, list) else []
        self.prompt_text = prompt_text

    @property
    def assistant_count(self) -> int:
        return sum(1 for m in self.messages if isinstance(m, Mapping) and m.get("role") == "assistant")

    def _texts(self, role: str) -> list[str]:
        return [
            text_of(m.get("content"))
            for m in self.messages
            if isinstance(m, Mapping) and m.get("role") == role
        ]

    @property
    def first_user(self) -> str | None:
        if self.prompt_text is not None:
            return self.prompt_text
        users = self._texts("user")
        return users[0] if users else None

    @property
    def last_user(self) -> str | None:
        if self.prompt_text is not None:
            return self.prompt_text
        users = self._texts("user")
        return users[-1] if users else None

    @property
    def last_role(self) -> str | None:
        if not self.messages or not isinstance(self.messages[-1], Mapping):
            return None
        return self.messages[-1].get("role")

    @property
    def last_is_tool(self) -> bool:
        return self.last_role in ("tool", "function")

    @property
    def recent_tool_results(self) -> list[str]:
        out: list[str] = []
        for m in reversed(self.messages):
            if not isinstance(m, Mapping) or m.get("role") == "assistant":
                break
            if m.get("role") in ("tool", "function"):
                out.append(text_of(m.get("content")))
        return out[::-1]

    @property
    def tools_offered(self) -> list[str]:
        return tool_names(self.body.get("tools"))

    @property
    def temperature(self) -> float | None:
        t = self.body.get("temperature")
        return t if isinstance(t, (int, float)) and not isinstance(t, bool) else None

    @property
    def model(self) -> str | None:
        m = self.body.get("model")
        return m if isinstance(m, str) else None


def text_of(content: Any) -> str:
    """Text of a message ``content`` (a string, None, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def tool_names(tools: Any) -> list[str]:
    """Names of the tools in an OpenAI ``tools`` list."""
    out: list[str] = []
    for t in tools or []:
        if isinstance(t, Mapping):
            fn = t.get("function") if isinstance(t.get("function"), Mapping) else t
            name = fn.get("name")
            if isinstance(name, str):
                out.append(name)
    return out


def _short(s: Any, n: int = 120) -> str:
    if s is None:
        return "None"
    s = str(s)
    return repr(s if len(s) <= n else s[: n - 3] + "...")


# ------------------------------------------------------------------------------------------------ file loading
class _MarkedDict(dict):
    """A dict that remembers the source line of each key (from YAML marks)."""

    line: int | None = None
    lines: dict[Any, int]


class _MarkedList(list):
    line: int | None = None
    lines: list[int]


class _Loader(yaml.SafeLoader):
    pass


def _construct_map(loader: _Loader, node: yaml.MappingNode) -> _MarkedDict:
    loader.flatten_mapping(node)
    d = _MarkedDict()
    d.line = node.start_mark.line + 1
    d.lines = {}
    for k_node, v_node in node.value:
        key = loader.construct_object(k_node, deep=True)
        try:
            d[key] = loader.construct_object(v_node, deep=True)
        except TypeError:  # unhashable key
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable key", k_node.start_mark
            ) from None
        d.lines[key] = k_node.start_mark.line + 1
    return d


def _construct_seq(loader: _Loader, node: yaml.SequenceNode) -> _MarkedList:
    lst = _MarkedList(loader.construct_object(n, deep=True) for n in node.value)
    lst.line = node.start_mark.line + 1
    lst.lines = [n.start_mark.line + 1 for n in node.value]
    return lst


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_seq)


def load_script(path: str | Path) -> Script:
    """Load and validate a YAML or JSON script file. Raises :class:`ScriptError` naming the file, line and field."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScriptError(
            f"{p}: script file should be readable; got {e.strerror or e}.\nFix: check the path passed as the script."
        ) from None
    return parse_script_text(text, str(p))


def parse_script_text(text: str, source: str = "<string>") -> Script:
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        if source.endswith(".json"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as je:
                raise ScriptError(
                    f"{source}, line {je.lineno}, column {je.colno}: the file should be valid JSON; got {je.msg}.\n"
                    "Fix: correct the JSON syntax at that position."
                ) from None
        else:
            raise ScriptError(
                f"{source}{where}: the file should be valid YAML; got {problem}.\n"
                "Fix: correct the YAML syntax at that line (indent with spaces, quote strings with ':' or '#')."
            ) from None
    if data is None:
        raise ScriptError(
            f"{source}: the script should hold turns; got an empty file.\nFix: add a `turns:` list."
        )
    return _script(data, source)


# -------------------------------------------------------------------------------------------------- validation
def _at(source: str | None, container: Any, key: Any = None) -> str:
    line = None
    if isinstance(container, _MarkedDict):
        line = container.lines.get(key, container.line) if key is not None else container.line
    elif isinstance(container, _MarkedList):
        line = container.lines[key] if isinstance(key, int) and key < len(container.lines) else container.line
    src = source or "<python>"
    return f"{src}, line {line}" if line is not None else src


def _fail(source: str | None, container: Any, key: Any, path: str, problem: str, fix: str) -> ScriptError:
    return ScriptError(f"{_at(source, container, key)}: {path} {problem}.\nFix: {fix}")


def _validate(obj: Mapping[str, Any], path: str, source: str | None) -> None:
    """Cheap shape checks on a turn mapping (unknown fields) — detailed checks happen while building."""
    allowed = _CALL_FIELDS if path.endswith("tool_calls[]") else _TURN_FIELDS
    for k in obj:
        if k not in allowed:
            raise _fail(
                source,
                obj,
                k,
                path,
                f"should only have the fields {', '.join(allowed)}; got unknown field {k!r}",
                f"rename or remove {k!r}{_did_you_mean(k, allowed)}.",
            )


def _did_you_mean(name: Any, options: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(str(name), list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _script(data: Any, source: str) -> Script:
    if isinstance(data, list):
        return Script(turns=_turns(data, "turns", source), source=source)
    if not isinstance(data, Mapping):
        raise _fail(
            source,
            data,
            None,
            "the script",
            f"should be a mapping with `turns:` or a list of turns; got {type(data).__name__}",
            "write `turns:` followed by a list of turns (each with content and/or tool_calls).",
        )
    for k in data:
        if k not in _TOP_FIELDS:
            raise _fail(
                source,
                data,
                k,
                "the script",
                f"should only have the fields {', '.join(_TOP_FIELDS)}; got {k!r}",
                f"rename or remove {k!r}{_did_you_mean(k, _TOP_FIELDS)}.",
            )
    if "turns" in data and "scripts" in data:
        raise _fail(
            source,
            data,
            "scripts",
            "the script",
            "should have either `turns` or `scripts`, not both",
            "move the turns into one of the keyed scripts.",
        )
    if "scripts" in data:
        keyed = data["scripts"]
        if not isinstance(keyed, Mapping) or not keyed:
            raise _fail(
                source,
                data,
                "scripts",
                "scripts",
                "should be a non-empty mapping of prompt regex to script",
                'write e.g. `scripts: {"capital of France": {turns: [...]}}`.',
            )
        out: list[tuple[str, Script]] = []
        for key, sub in keyed.items():
            if not isinstance(key, str):
                raise _fail(
                    source,
                    keyed,
                    key,
                    "scripts",
                    f"keys should be regex strings; got {key!r}",
                    "quote the key.",
                )
            try:
                re.compile(key)
            except re.error as e:
                raise _fail(
                    source,
                    keyed,
                    key,
                    f"scripts[{key!r}]",
                    f"should be a valid regex; got error {e}",
                    "escape special characters such as * ? ( ) with a backslash.",
                ) from None
            if isinstance(sub, Mapping) and "scripts" in sub:
                raise _fail(
                    source, keyed, key, f"scripts[{key!r}]", "should not nest keyed scripts", "flatten them."
                )
            sub_s = _script(sub, source)
            out.append((key, sub_s))
        return Script(keyed=out, source=source)
    if "turns" not in data:
        raise _fail(
            source,
            data,
            None,
            "the script",
            "should have a `turns:` list",
            "add `turns:` with at least one turn.",
        )
    turns = data["turns"]
    if not isinstance(turns, list):
        raise _fail(
            source,
            data,
            "turns",
            "turns",
            f"should be a list; got {type(turns).__name__}",
            "write each turn as a list item starting with `- `.",
        )
    return Script(turns=_turns(turns, "turns", source), source=source)


def _turns(items: list[Any], path: str, source: str) -> list[Turn]:
    if not items:
        raise _fail(
            source,
            items,
            None,
            path,
            "should hold at least one turn; got an empty list",
            'add a turn such as `- content: "done"`.',
        )
    return [_turn_item(items, i, f"{path}[{i}]", source) for i in range(len(items))]


def _turn_item(items: list[Any], i: int, path: str, source: str | None) -> Turn:
    obj = items[i]
    if isinstance(obj, str):
        return Turn(content=obj)
    if not isinstance(obj, Mapping):
        raise _fail(
            source,
            items,
            i,
            path,
            f"should be a mapping with content and/or tool_calls; got {obj!r}",
            'write the turn as `- content: "..."` or `- tool_calls: [...]`.',
        )
    _validate(obj, path, source)
    return _turn(obj, path, source)


def _turn(obj: Mapping[str, Any], path: str, source: str | None) -> Turn:
    content = obj.get("content")
    if content is not None and not isinstance(content, str):
        raise _fail(
            source,
            obj,
            "content",
            f"{path}.content",
            f"should be a string or null; got {content!r}",
            "quote the text.",
        )
    reasoning = obj.get("reasoning_content")
    if reasoning is not None and not isinstance(reasoning, str):
        raise _fail(
            source,
            obj,
            "reasoning_content",
            f"{path}.reasoning_content",
            f"should be a string; got {reasoning!r}",
            "quote the text.",
        )
    calls_raw = obj.get("tool_calls") or []
    if not isinstance(calls_raw, list):
        raise _fail(
            source,
            obj,
            "tool_calls",
            f"{path}.tool_calls",
            f"should be a list; got {calls_raw!r}",
            "write `tool_calls: [{name: ..., arguments: {...}}]`.",
        )
    calls = []
    for j, c in enumerate(calls_raw):
        cpath = f"{path}.tool_calls[{j}]"
        if not isinstance(c, Mapping):
            raise _fail(
                source,
                calls_raw,
                j,
                cpath,
                f"should be a mapping with name and arguments; got {c!r}",
                "write `{name: tool_name, arguments: {...}}`.",
            )
        for k in c:
            if k not in _CALL_FIELDS:
                raise _fail(
                    source,
                    c,
                    k,
                    cpath,
                    f"should only have the fields name, arguments, id; got {k!r}",
                    f"rename or remove {k!r}{_did_you_mean(k, _CALL_FIELDS)}.",
                )
        calls.append(_tool_call(c, cpath, source))
    finish = obj.get("finish_reason")
    if finish is not None and finish not in _FINISH_REASONS:
        raise _fail(
            source,
            obj,
            "finish_reason",
            f"{path}.finish_reason",
            f"should be one of {', '.join(_FINISH_REASONS)}; got {finish!r}",
            "use one of those values.",
        )
    if (
        content is None
        and not calls
        and reasoning is None
        and "content" not in obj
        and not obj.get("choices")
        and not obj.get("fault")
    ):
        raise _fail(
            source,
            obj,
            None,
            path,
            "should have content and/or tool_calls; got neither",
            'add `content: "..."` (use `content: ""` for an empty reply).',
        )
    match = None
    if obj.get("match") is not None:
        m = obj["match"]
        if not isinstance(m, Mapping):
            raise _fail(
                source,
                obj,
                "match",
                f"{path}.match",
                f"should be a mapping of conditions; got {m!r}",
                f'write e.g. `match: {{user: "regex"}}` with fields {", ".join(_MATCH_FIELDS)}.',
            )
        match = _match(m, f"{path}.match", source)
    fault = None
    if obj.get("fault") is not None:
        try:
            fault = fault_from_obj(obj["fault"])
        except (ValueError, TypeError) as e:
            raise _fail(
                source,
                obj,
                "fault",
                f"{path}.fault",
                f"should be a valid fault; got {e}",
                "see docs/fake-server.md#faults for the fault kinds and their options.",
            ) from None
    choices = []
    raw_choices = obj.get("choices") or []
    if not isinstance(raw_choices, list):
        raise _fail(
            source, obj, "choices", f"{path}.choices", "should be a list of turns", "write `choices: [...]`."
        )
    for j in range(len(raw_choices)):
        ch = _turn_item(raw_choices, j, f"{path}.choices[{j}]", source)
        if ch.match is not None or ch.fault is not None or ch.choices:
            raise _fail(
                source,
                raw_choices,
                j,
                f"{path}.choices[{j}]",
                "should not have match, fault or choices",
                "put those on the enclosing turn.",
            )
        choices.append(ch)
    return Turn(
        content=content,
        tool_calls=calls,
        reasoning_content=reasoning,
        finish_reason=finish,
        match=match,
        fault=fault,
        choices=choices,
    )


def _tool_call(c: Mapping[str, Any], path: str, source: str | None) -> ToolCall:
    name = c.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(
            source,
            c,
            "name" if "name" in c else None,
            f"{path}.name",
            f"should be the tool's name (a non-empty string); got {name!r}",
            "add `name: <tool name>`.",
        )
    args = c.get("arguments", {})
    if isinstance(args, str):
        pass  # sent verbatim (lets a script send deliberately invalid JSON)
    elif isinstance(args, Mapping):
        args = json.dumps(_plain(args), ensure_ascii=False)
    else:
        raise _fail(
            source,
            c,
            "arguments",
            f"{path}.arguments",
            f"should be a mapping or a JSON string; got {args!r}",
            "write `arguments: {key: value}`.",
        )
    cid = c.get("id")
    if cid is not None and not isinstance(cid, str):
        raise _fail(source, c, "id", f"{path}.id", f"should be a string; got {cid!r}", "quote the id.")
    return ToolCall(name=name, arguments=args, id=cid)


def _match(m: Mapping[str, Any], path: str, source: str | None) -> Match:
    for k in m:
        if k not in _MATCH_FIELDS:
            raise _fail(
                source,
                m,
                k,
                path,
                f"should only have the conditions {', '.join(_MATCH_FIELDS)}; got {k!r}",
                f"rename or remove {k!r}{_did_you_mean(k, _MATCH_FIELDS)}.",
            )
    for k in ("user", "tool_result", "model"):
        v = m.get(k)
        if v is None:
            continue
        if not isinstance(v, str):
            raise _fail(
                source, m, k, f"{path}.{k}", f"should be a regex string; got {v!r}", "quote the pattern."
            )
        try:
            re.compile(v)
        except re.error as e:
            raise _fail(
                source,
                m,
                k,
                f"{path}.{k}",
                f"should be a valid regex; got error {e}",
                "escape special characters with a backslash.",
            ) from None
    tr = m.get("tool_results")
    if tr is not None and not isinstance(tr, bool):
        raise _fail(
            source,
            m,
            "tool_results",
            f"{path}.tool_results",
            f"should be true or false; got {tr!r}",
            "use tool_result: <regex> to match the text of a result.",
        )
    to = m.get("tools_offered")
    if to is not None and not isinstance(to, bool):
        if isinstance(to, str):
            to = [to]
        if not isinstance(to, list) or not all(isinstance(x, str) for x in to):
            raise _fail(
                source,
                m,
                "tools_offered",
                f"{path}.tools_offered",
                f"should be true/false or a list of tool names; got {to!r}",
                "write `[terminal, file]`.",
            )
        to = list(to)
    temp = m.get("temperature")
    if temp is not None:
        if isinstance(temp, Mapping):
            extra = set(temp) - {"min", "max"}
            if extra or not all(isinstance(v, (int, float)) for v in temp.values()):
                raise _fail(
                    source,
                    m,
                    "temperature",
                    f"{path}.temperature",
                    f"should be a number or {{min: x, max: y}}; got {dict(temp)!r}",
                    "use numbers.",
                )
            temp = (temp.get("min"), temp.get("max"))
        elif isinstance(temp, bool) or not isinstance(temp, (int, float)):
            raise _fail(
                source,
                m,
                "temperature",
                f"{path}.temperature",
                f"should be a number or {{min: x, max: y}}; got {temp!r}",
                "use a number such as 0.",
            )
    return Match(
        user=m.get("user"),
        tool_results=tr,
        tool_result=m.get("tool_result"),
        tools_offered=to,
        temperature=temp,
        model=m.get("model"),
    )


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def _turn_to_dict(t: Turn) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if t.content is not None or not t.tool_calls:
        d["content"] = t.content
    if t.reasoning_content is not None:
        d["reasoning_content"] = t.reasoning_content
    if t.tool_calls:
        d["tool_calls"] = [
            {"name": c.name, "arguments": c.arguments, **({"id": c.id} if c.id else {})} for c in t.tool_calls
        ]
    if t.finish_reason:
        d["finish_reason"] = t.finish_reason
    if t.match is not None and not t.match.is_empty():
        mm: dict[str, Any] = {}
        for f in _MATCH_FIELDS:
            v = getattr(t.match, f)
            if v is None:
                continue
            if f == "temperature" and isinstance(v, tuple):
                v = {k: x for k, x in zip(("min", "max"), v, strict=True) if x is not None}
            mm[f] = v
        d["match"] = mm
    if t.fault is not None:
        d["fault"] = t.fault.to_dict()
    if t.choices:
        d["choices"] = [_turn_to_dict(c) for c in t.choices]
    return d
