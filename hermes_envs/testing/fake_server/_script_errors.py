"""Script validation and its one error message: every problem at once, each with file, line (when the data came
from YAML, see :mod:`.script_yaml`), the field's path (``turns[1].tool_calls[0]``), what was expected and what was
found, and a fix. An unknown key that is a field of the level above or below (``match:`` dedented out of its turn,
``arguments:`` written at the turn's level) is reported as the indentation mistake it most likely is."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hermes_envs.errors import ScriptError

from ._script_schema import CALL_FIELDS, MATCH_FIELDS, TOP_FIELDS, TURN_FIELDS

__all__ = ["script_error", "validated"]

M = TypeVar("M", bound=BaseModel)


# ----------------------------------------------------------------------------------------------- validation
def validated(model: type[M], data: Any, source: str, root: tuple[str, ...], context: dict[str, Any]) -> M:
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


def _one(item: Mapping[str, Any], data: Any, source: str, root: tuple[str, ...]) -> str:
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
