"""The script data model: :class:`Turn` (one assistant reply), its :class:`Match` conditions, :class:`Script`,
and :func:`load_script` for files.

Mappings (from Python or from files) are validated by the pydantic models of :mod:`.script_schema` and built here;
files are read by :mod:`.script_yaml`, which keeps the line of every key for the error messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_envs.errors import ScriptError

from ._faults import Fault, fault_from_obj
from ._script_errors import validated
from ._script_schema import FINISH_REASONS, MatchSpec, ScriptSpec, TurnSpec
from ._script_yaml import read_script_data, script_data
from ._tool_call import ToolCall
from ._view import short

if TYPE_CHECKING:
    from ._view import RequestView

__all__ = ["FINISH_REASONS", "Match", "Script", "ToolCall", "Turn", "load_script", "parse_script_text"]

_CONTEXT = {"fault_from_obj": fault_from_obj}


@dataclass
class Match:
    """Conditions a request must meet for a turn to answer it. ``None`` means "don't care"."""

    user: str | None = None
    tool_results: bool | None = None
    tool_result: str | None = None
    tools_offered: bool | list[str] | None = None
    temperature: float | tuple[float | None, float | None] | None = None
    model: str | None = None

    @classmethod
    def from_spec(cls, spec: MatchSpec) -> Match:
        """The Match a validated ``match:`` mapping describes."""
        return cls(**{f.name: getattr(spec, f.name) for f in fields(cls)})

    def conditions(self) -> dict[str, Any]:
        """The conditions that are set, by field name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def is_empty(self) -> bool:
        return not self.conditions()

    def mismatches(self, view: RequestView) -> list[str]:
        """Each unmet condition as ``"<field>: expected ...; got ..."``. Empty when the request matches."""
        out: list[str] = []
        if self.user is not None and not re.search(self.user, view.last_user or ""):
            out.append(
                f"user: expected a last user message matching /{self.user}/; got {short(view.last_user)}"
            )
        if self.tool_results is not None and view.last_is_tool != self.tool_results:
            want = "a tool result" if self.tool_results else "not a tool result"
            out.append(f"tool_results: expected the last message to be {want}; got role {view.last_role!r}")
        if self.tool_result is not None and not any(
            re.search(self.tool_result, t) for t in view.recent_tool_results
        ):
            out.append(
                f"tool_result: expected a tool result matching /{self.tool_result}/ since the last assistant "
                f"message; got {[short(t, 80) for t in view.recent_tool_results]!r}"
            )
        if self.tools_offered is not None:
            offered = view.tools_offered
            if isinstance(self.tools_offered, bool):
                if bool(offered) != self.tools_offered:
                    want = "some tools" if self.tools_offered else "no tools"
                    out.append(f"tools_offered: expected {want} offered; got {offered!r}")
            elif any(t not in offered for t in self.tools_offered):
                out.append(f"tools_offered: expected {self.tools_offered!r} offered; got {offered!r}")
        if self.temperature is not None:
            t = view.temperature
            if isinstance(self.temperature, tuple):
                lo, hi = self.temperature
                ok = t is not None and (lo is None or t >= lo) and (hi is None or t <= hi)
                bounds = (
                    f"at least {lo}" if lo is not None else "",
                    f"at most {hi}" if hi is not None else "",
                )
                want = " and ".join(x for x in bounds if x)
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
            self.match = Match.from_spec(validated(MatchSpec, self.match, "<python>", ("match",), _CONTEXT))
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
        return cls.from_spec(validated(TurnSpec, obj, "<python>", ("turn",), _CONTEXT))

    @classmethod
    def from_spec(cls, spec: TurnSpec) -> Turn:
        """The Turn a validated turn entry describes."""
        return cls(
            content=spec.content,
            tool_calls=[ToolCall.from_spec(c) for c in spec.tool_calls or []],
            reasoning_content=spec.reasoning_content,
            finish_reason=spec.finish_reason,
            match=Match.from_spec(spec.match) if spec.match is not None else None,
            fault=spec.fault,
            choices=[cls.from_spec(c) for c in spec.choices or []],
        )

    @property
    def resolved_finish_reason(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")

    def choice_turns(self, n: int) -> list[Turn]:
        """The turns answering choices 0..n-1: the turn's ``choices`` cycled, or the turn itself n times."""
        if not self.choices:
            return [self] * n
        return [self.choices[i % len(self.choices)] for i in range(n)]

    def describe(self) -> str:
        """A one-line summary used in miss messages."""
        parts = []
        if self.content is not None:
            parts.append(f"content={short(self.content, 60)}")
        for tc in self.tool_calls:
            parts.append(f"tool_call {tc.name}({short(tc.arguments, 60)})")
        if self.match is not None and not self.match.is_empty():
            parts.append(f"match={self.match.conditions()}")
        return ", ".join(parts) or "empty reply"

    def to_dict(self) -> dict[str, Any]:
        """The turn in the file schema."""
        d: dict[str, Any] = {}
        if self.content is not None or not self.tool_calls:
            d["content"] = self.content
        if self.reasoning_content is not None:
            d["reasoning_content"] = self.reasoning_content
        if self.tool_calls:
            d["tool_calls"] = [
                {"name": c.name, "arguments": c.arguments, **({"id": c.id} if c.id else {})}
                for c in self.tool_calls
            ]
        if self.finish_reason:
            d["finish_reason"] = self.finish_reason
        if self.match is not None and not self.match.is_empty():
            conds = self.match.conditions()
            if isinstance(conds.get("temperature"), tuple):
                lo_hi = zip(("min", "max"), conds["temperature"], strict=True)
                conds["temperature"] = {k: x for k, x in lo_hi if x is not None}
            d["match"] = conds
        if self.fault is not None:
            d["fault"] = self.fault.to_dict()
        if self.choices:
            d["choices"] = [c.to_dict() for c in self.choices]
        return d


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

    @classmethod
    def from_spec(cls, spec: ScriptSpec, source: str) -> Script:
        """The Script a validated script mapping describes."""
        if spec.scripts:
            return cls(keyed=[(k, cls.from_spec(s, source)) for k, s in spec.scripts.items()], source=source)
        return cls(turns=[Turn.from_spec(t) for t in spec.turns or []], source=source)

    def __len__(self) -> int:
        return len(self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The script in the file schema (round-trips through :func:`load_script`)."""
        if self.keyed:
            return {"scripts": {k: s.to_dict() for k, s in self.keyed}}
        return {"turns": [t.to_dict() for t in self.turns]}


def load_script(path: str | Path) -> Script:
    """Load and validate a YAML or JSON script file; a ScriptError names the file, line and field of every problem."""
    return _script(*read_script_data(path))


def parse_script_text(text: str, source: str = "<string>") -> Script:
    """Parse and validate script text; ``source`` names it in error messages (every problem at once)."""
    return _script(script_data(text, source), source)


def _script(data: Any, source: str) -> Script:
    return Script.from_spec(validated(ScriptSpec, data, source, (), _CONTEXT), source)
