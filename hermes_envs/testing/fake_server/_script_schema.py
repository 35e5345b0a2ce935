"""The script file schema as pydantic models (``extra="forbid"``: an unknown key is a problem).

Each field checks its own value and words its problem and fix (a ``PydanticCustomError`` carrying both), so that
pydantic collects every problem of a script in one pass; :mod:`.script_errors` turns them into one message. The
models hold validated, normalised values (arguments as a JSON string, a Fault, a temperature range as a tuple);
:mod:`.turns` builds the data model from them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = [
    "FINISH_REASONS",
    "MatchSpec",
    "ScriptSpec",
    "ToolCallSpec",
    "TurnSpec",
    "TOP_FIELDS",
    "TURN_FIELDS",
    "CALL_FIELDS",
    "MATCH_FIELDS",
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
            return info.context["fault_from_obj"](v)  # type: ignore[index]  # (no context: the TypeError below)
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


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj
