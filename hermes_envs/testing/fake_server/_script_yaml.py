"""Reading script files: YAML (or JSON) parsed into dicts and lists that keep the line of every key and item, so
that validation errors can name them (:mod:`.script_schema`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from hermes_envs.errors import ScriptError

__all__ = ["read_script_data", "script_data"]


class _MarkedDict(dict):
    """A dict that remembers its own line and the line of each key (from YAML marks)."""

    line: int | None = None
    lines: dict[object, int]


class _MarkedList(list):
    """A list that remembers its own line and the line of each item."""

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


def read_script_data(path: str | Path) -> tuple[Any, str]:
    """(the file's data with line marks, its name for messages); a ScriptError when unreadable or not YAML/JSON."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScriptError(
            f"{p}: script file should be readable; got {e.strerror or e}.\nFix: check the path passed as the script."
        ) from None
    return script_data(text, str(p)), str(p)


def script_data(text: str, source: str = "<string>") -> Any:
    """The data in script text, with line marks; a ScriptError for a syntax error or an empty text."""
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
            hint = _indent_hint(text, mark.line, mark.column) if mark is not None else None
            raise ScriptError(
                f"{source}{where}: the file should be valid YAML; got {problem}.\n"
                + (
                    f"Fix: {hint}"
                    if hint
                    else "Fix: correct the YAML syntax at that line (indent with spaces, quote strings with ':' or "
                    "'#')."
                )
            ) from None
    if data is None:
        raise ScriptError(
            f"{source}: the script should hold turns; got an empty file.\nFix: add a `turns:` list."
        )
    return data


_KEY = re.compile(r"^(?P<lead>[ ]*(?:-[ ]+)*)(?P<key>[\w.-]+)\s*:")


def _indent_hint(text: str, line: int, column: int) -> str | None:
    """For a key indented off the mapping above it: the column it most likely belongs at (0-based ``line`` and
    ``column`` from the YAML mark), worded as a fix; None when the error is not about indentation."""
    lines = text.splitlines()
    if line >= len(lines):
        return None
    here = _KEY.match(lines[line])
    if here is None or len(here.group("lead")) != column:
        return None
    for above in range(line - 1, -1, -1):
        m = _KEY.match(lines[above])
        if m is None:
            continue
        col = len(m.group("lead"))
        if col > column:
            return (
                f"`{here.group('key')}:` starts at column {column + 1}, but the key `{m.group('key')}:` above it "
                f"(line {above + 1}) starts at column {col + 1}: indent `{here.group('key')}` to column {col + 1} to "
                "put it in that mapping, or dedent it to the column of the mapping it belongs to (keys of one "
                "mapping line up exactly)."
            )
        if col < column and not m.group("lead").strip():
            return (
                f"`{here.group('key')}:` starts at column {column + 1}, deeper than the key `{m.group('key')}:` "
                f"above it (line {above + 1}, column {col + 1}) but not under a key that takes a mapping: line "
                "it up with the keys of the mapping it belongs to."
            )
    return None
