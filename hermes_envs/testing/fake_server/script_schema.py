"""The script file schema as pydantic models, and the ScriptError that lists every problem at once.

Each model field checks its own value and words its problem and fix (a ``PydanticCustomError`` carrying both);
pydantic collects every problem of a script in one pass, and :func:`script_error` turns them into one message:
file, line (when the data came from YAML, see :mod:`.script_yaml`), the field's path (``turns[1].tool_calls[0]``),
what was expected and what was found, and a fix. An unknown key that is a field of the level above or below
(``match:`` dedented out of its turn, ``arguments:`` written at the turn's level) is reported as the indentation
mistake it most likely is.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from hermes_envs.errors import ScriptError

__all__ = [
    "FINISH_REASONS",
    "MatchSpec",
    "ScriptSpec",
    "ToolCallSpec",
    "TurnSpec",
    "script_error",
    "validated",
]

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")


def _problem(problem: str, fix: str) -> PydanticCustomError:
    return PydanticCustomError("script", "{problem}", {"problem": problem, "fix": fix})


def _regex(v: Any) -> Any:
    if v is None:
        return v
    if not isinstance(v, str):
        raise _problem(f"should be a regex string; got {v!r}", "quote the pattern.")
    try:
        re.compile(v)
    except re.error as e:
        raise _problem(
            f"should be a valid regex; got error {e}", "escape special characters with a backslash."
        ) from None
    return v


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, hide_input_in_errors=True)


class ToolCallSpec(_Spec):
    """``tool_calls[]``: ``{name, arguments, id}``."""

    name: Any = Field(default=None, validate_default=True)
    arguments: Any = Field(default_factory=dict)
    id: Any = None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: Any) -> str:
        if not isinstance(v, str) or not v:
            raise _problem(
                f"should be the tool's name (a non-empty string); got {v!r}", "add `name: <tool name>`."
            )
        return v

    @field_validator("arguments", mode="before")
    @classmethod
    def _arguments(cls, v: Any) -> str:
        if isinstance(v, str):
            return v  # sent verbatim (lets a script send deliberately invalid JSON)
        if isinstance(v, Mapping):
            return json.dumps(_plain(v), ensure_ascii=False)
        raise _problem(f"should be a mapping or a JSON string; got {v!r}", "write `arguments: {key: value}`.")

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, str):
            raise _problem(f"should be a string; got {v!r}", "quote the id.")
        return v


class MatchSpec(_Spec):
    """``match:``: the conditions a request must meet."""

    user: Annotated[Any, AfterValidator(_regex)] = None
    tool_results: Any = None
    tool_result: Annotated[Any, AfterValidator(_regex)] = None
    tools_offered: Any = None
    temperature: Any = None
    model: Annotated[Any, AfterValidator(_regex)] = None

    @field_validator("tool_results", mode="before")
    @classmethod
    def _tool_results(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, bool):
            raise _problem(
                f"should be true or false; got {v!r}",
                "use tool_result: <regex> to match the text of a result.",
            )
        return v

    @field_validator("tools_offered", mode="before")
    @classmethod
    def _tools_offered(cls, v: Any) -> Any:
        if v is None or isinstance(v, bool):
            return v
        v = [v] if isinstance(v, str) else v
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _problem(
                f"should be true/false or a list of tool names; got {v!r}", "write `[terminal, file]`."
            )
        return list(v)

    @field_validator("temperature", mode="before")
    @classmethod
    def _temperature(cls, v: Any) -> Any:
        if v is None:
            return v
        if isinstance(v, Mapping):
            if set(v) - {"min", "max"} or not all(_is_number(x) for x in v.values()):
                raise _problem(f"should be a number or {{min: x, max: y}}; got {dict(v)!r}", "use numbers.")
            return (v.get("min"), v.get("max"))
        if not _is_number(v):
            raise _problem(f"should be a number or {{min: x, max: y}}; got {v!r}", "use a number such as 0.")
        return v


class TurnSpec(_Spec):
    """``turns[]``: one assistant reply (a plain string is its content)."""

    content: Any = None
    reasoning_content: Any = None
    tool_calls: list[ToolCallSpec] | None = None
    finish_reason: Any = None
    match: MatchSpec | None = None
    fault: Any = None
    choices: list[ChoiceSpec] | None = None

    @model_validator(mode="before")
    @classmethod
    def _string_is_content(cls, data: Any) -> Any:
        return {"content": data} if isinstance(data, str) else data

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, str):
            raise _problem(f"should be a string or null; got {v!r}", "quote the text.")
        return v

    @field_validator("reasoning_content", mode="before")
    @classmethod
    def _reasoning(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, str):
            raise _problem(f"should be a string; got {v!r}", "quote the text.")
        return v

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _tool_calls_list(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, list):
            raise _problem(
                f"should be a list; got {v!r}", "write `tool_calls: [{name: ..., arguments: {...}}]`."
            )
        return v

    @field_validator("finish_reason", mode="before")
    @classmethod
    def _finish(cls, v: Any) -> Any:
        if v is not None and v not in FINISH_REASONS:
            raise _problem(
                f"should be one of {', '.join(FINISH_REASONS)}; got {v!r}", "use one of those values."
            )
        return v

    @field_validator("fault", mode="before")
    @classmethod
    def _fault(cls, v: Any, info: ValidationInfo) -> Any:
        if v is None:
            return None
        try:  # the fault parser comes in the validation context: faults are a layer below this schema
            return info.context["fault_from_obj"](v)
        except (ValueError, TypeError) as e:
            raise _problem(
                f"should be a valid fault; got {e}",
                "see docs/fake-server.md#faults for the fault kinds and their options.",
            ) from None

    @field_validator("choices", mode="before")
    @classmethod
    def _choices(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, list):
            raise _problem("should be a list of turns", "write `choices: [...]`.")
        return v

    @model_validator(mode="after")
    def _says_something(self) -> TurnSpec:
        if (
            self.content is None
            and not self.tool_calls
            and self.reasoning_content is None
            and "content" not in self.model_fields_set
            and not self.choices
            and self.fault is None
        ):
            raise _problem(
                "should have content and/or tool_calls; got neither",
                'add `content: "..."` (use `content: ""` for an empty reply).',
            )
        return self


class ChoiceSpec(TurnSpec):
    """``choices[]``: a turn without match, fault or choices of its own."""

    @model_validator(mode="after")
    def _plain_turn(self) -> ChoiceSpec:
        if self.match is not None or self.fault is not None or self.choices:
            raise _problem("should not have match, fault or choices", "put those on the enclosing turn.")
        return self


def _regex_key(v: Any) -> str:
    if not isinstance(v, str):
        raise _problem(f"keys should be regex strings; got {v!r}", "quote the key.")
    try:
        re.compile(v)
    except re.error as e:
        raise _problem(
            f"should be a valid regex; got error {e}",
            "escape special characters such as * ? ( ) with a backslash.",
        ) from None
    return v


class ScriptSpec(_Spec):
    """The whole file: ``turns:`` (or a bare list of turns), or keyed ``scripts:``."""

    turns: list[TurnSpec] | None = None
    scripts: dict[Annotated[Any, AfterValidator(_regex_key)], SubScriptSpec] | None = None
    name: Any = None
    description: Any = None

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"turns": data}
        if not isinstance(data, Mapping):
            raise _problem(
                f"should be a mapping with `turns:` or a list of turns; got {type(data).__name__}",
                "write `turns:` followed by a list of turns (each with content and/or tool_calls).",
            )
        if "turns" in data and "scripts" in data:
            raise _problem(
                "should have either `turns` or `scripts`, not both",
                "move the turns into one of the keyed scripts.",
            )
        if "turns" not in data and "scripts" not in data and not (set(data) - set(TOP_FIELDS)):
            raise _problem("should have a `turns:` list", "add `turns:` with at least one turn.")
        return data

    @field_validator("turns", mode="before")
    @classmethod
    def _turns_list(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, list):
            raise _problem(
                f"should be a list; got {type(v).__name__}",
                "write each turn as a list item starting with `- `.",
            )
        if not v:
            raise _problem(
                "should hold at least one turn; got an empty list", 'add a turn such as `- content: "done"`.'
            )
        return v

    @field_validator("scripts", mode="before")
    @classmethod
    def _scripts(cls, v: Any) -> Any:
        if v is not None and (not isinstance(v, Mapping) or not v):
            raise _problem(
                "should be a non-empty mapping of prompt regex to script",
                'write e.g. `scripts: {"capital of France": {turns: [...]}}`.',
            )
        return v


class SubScriptSpec(ScriptSpec):
    """``scripts: {regex: ...}``: one keyed script (keyed scripts do not nest)."""

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "scripts" in data:
            raise _problem("should not nest keyed scripts", "flatten them.")
        return data


TurnSpec.model_rebuild()
ScriptSpec.model_rebuild()

TOP_FIELDS = tuple(ScriptSpec.model_fields)
TURN_FIELDS = tuple(TurnSpec.model_fields)
CALL_FIELDS = tuple(ToolCallSpec.model_fields)
MATCH_FIELDS = tuple(MatchSpec.model_fields)


# ----------------------------------------------------------------------------------------------- validation
def validated(
    model: type[_Spec], data: Any, source: str, root: tuple[str, ...], context: dict[str, Any]
) -> Any:
    """``data`` validated as ``model``, or one ScriptError naming every problem (``context``: see TurnSpec)."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as e:
        raise script_error(e, data, source, root) from None


# ----------------------------------------------------------------------------------------------- the message
# What a value of each kind should look like, for "should be a mapping" problems.
_ITEM_SHAPE = {
    "turn": (
        "should be a mapping with content and/or tool_calls",
        'write the turn as `- content: "..."` or `- tool_calls: [...]`.',
    ),
    "tool_call": (
        "should be a mapping with name and arguments",
        "write `{name: tool_name, arguments: {...}}`.",
    ),
    "match": ("should be a mapping of conditions", 'write e.g. `match: {user: "regex"}`.'),
}


def _fields(kind: str) -> tuple[str, ...]:
    return {"script": TOP_FIELDS, "turn": TURN_FIELDS, "tool_call": CALL_FIELDS, "match": MATCH_FIELDS}[kind]


def script_error(err: ValidationError, data: Any, source: str, root: tuple[str, ...] = ()) -> ScriptError:
    """One ScriptError naming every problem in ``err`` (file, line, path, expectation, value, fix).

    ``.problems`` on the error holds the problems one by one (each ``"<where>: <path> <problem>.\\nFix: ..."``).
    """
    problems: list[str] = []
    for item in err.errors(include_url=False):
        text = _one(item, data, source, root)
        if text not in problems:
            problems.append(text)
    if len(problems) == 1:
        exc = ScriptError(problems[0])
    else:
        body = "\n\n".join(f"[{i + 1}] {p}" for i, p in enumerate(problems))
        exc = ScriptError(f"{source}: the script should be valid; it has {len(problems)} problems:\n\n{body}")
    exc.problems = problems  # type: ignore[attr-defined]
    return exc


def _one(item: dict[str, Any], data: Any, source: str, root: tuple[str, ...]) -> str:
    loc = [p for p in item["loc"] if p != "[key]" and not (isinstance(p, str) and p.startswith("function-"))]
    typ = item["type"]
    if typ == "extra_forbidden":
        key = loc.pop()
        container, where = _walk(data, loc)
        kind = _kind(root, loc)
        path = _path(root, loc) or "the script"
        allowed = _fields(kind)
        label = "conditions" if kind == "match" else "fields"
        unknown = "unknown field " if kind in ("turn", "tool_call") else ""
        fix = f"rename or remove {key!r}{_did_you_mean(key, allowed)}."
        hint = _indent_hint(str(key), kind)
        if hint:
            fix = f"{hint} (or rename or remove {key!r})."
        return f"{_at(source, container, key, where)}: {path} should only have the {label} {', '.join(allowed)}; got {unknown}{key!r}.\nFix: {fix}"
    ctx = item.get("ctx") or {}
    if typ == "script":
        problem, fix = ctx["problem"], ctx["fix"]
    elif typ in ("model_type", "model_attributes_type", "dict_type"):
        problem, fix = _ITEM_SHAPE.get(_kind(root, loc), ("should be a mapping", "write a mapping."))
        problem = f"{problem}; got {_walk(data, loc)[0]!r}"
    elif typ == "list_type":
        problem, fix = "should be a list", "write a list (items starting with `- `)."
    else:  # not expected from these models: pydantic's own words
        problem, fix = str(item["msg"]), "correct the field."
    container, where = _walk(data, loc[:-1])
    path = _path(root, loc) or "the script"
    return f"{_at(source, container, loc[-1] if loc else None, where)}: {path} {problem}.\nFix: {fix}"


def _kind(root: tuple[str, ...], loc: list[Any]) -> str:
    """What the value at ``loc`` is: "script", "turn", "tool_call", "match" (or "value" for a plain field)."""
    kind = "script"
    for p in [*root, *loc]:
        if p in ("turn", "tool_call", "match", "script"):
            kind = p
        elif p == "tool_calls[]":
            kind = "tool_call"
        elif p in ("turns", "choices"):
            kind = "turns"
        elif p == "tool_calls":
            kind = "tool_calls"
        elif p == "scripts":
            kind = "scripts"
        elif isinstance(p, int) and kind in ("turns", "tool_calls"):
            kind = "turn" if kind == "turns" else "tool_call"
        elif kind == "scripts":
            kind = "script"  # a key of ``scripts``: a sub-script
        else:
            kind = "value"
    return kind


def _path(root: tuple[str, ...], loc: list[Any]) -> str:
    out = ".".join(root)
    after_scripts = False
    for p in loc:
        if isinstance(p, int):
            out += f"[{p}]"
        elif after_scripts:
            out += f"[{p!r}]"
            after_scripts = False
        else:
            out = f"{out}.{p}" if out else str(p)
            after_scripts = p == "scripts"
    return out


def _walk(data: Any, loc: list[Any]) -> tuple[Any, Any]:
    """(the value at ``loc``, its container's line-bearing parent) — best effort, for line numbers."""
    cur, parent = data, None
    for p in loc:
        if isinstance(cur, list) and p == "turns":
            continue  # a bare list of turns at the top level
        try:
            parent, cur = cur, cur[p]
        except (KeyError, IndexError, TypeError):
            return cur, parent
    return cur, parent


def _at(source: str, container: Any, key: Any, parent: Any) -> str:
    """``"<source>, line N"`` for ``key`` of ``container`` (YAML-marked data), else just the source."""
    line = _line_of(container, key)
    if line is None:
        line = _line_of(parent, None)
    return f"{source}, line {line}" if line is not None else source


def _line_of(container: Any, key: Any) -> int | None:
    lines = getattr(container, "lines", None)
    if lines is None:
        return None
    if key is not None:
        if isinstance(lines, dict) and key in lines:
            return lines[key]
        if isinstance(lines, list) and isinstance(key, int) and key < len(lines):
            return lines[key]
    return getattr(container, "line", None)


def _did_you_mean(name: Any, options: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(name), list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _indent_hint(key: str, kind: str) -> str | None:
    """The indentation mistake an unknown ``key`` at this level most likely is, or None."""
    turn, call, match, top = key in TURN_FIELDS, key in CALL_FIELDS, key in MATCH_FIELDS, key in TOP_FIELDS
    if kind == "script" and turn:
        return (
            f"{key!r} is a turn field, written at the script's level: indent it to line up with the fields of "
            "the turn above it"
        )
    if kind == "turn":
        if call:
            return (
                f"{key!r} is a tool-call field, written at the turn's level: indent it under the tool call "
                "(`tool_calls:`) it belongs to"
            )
        if match:
            return f"{key!r} is a match condition, written at the turn's level: put it under `match:`"
        if top:
            return f"{key!r} is a script field, written inside a turn: dedent it to the top level"
    if kind in ("tool_call", "match") and turn:
        return (
            f"{key!r} is a turn field, written inside `{'tool_calls' if kind == 'tool_call' else 'match'}:`: "
            "dedent it to line up with the turn's other fields"
        )
    if kind == "match" and call:
        return f"{key!r} is a tool-call field, written inside `match:`: move it into the tool call"
    return None


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj
