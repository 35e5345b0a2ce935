"""Where a scored rollout came from: one tagged origin per rollout instead of a row of optional label fields.

Each kind of rollout the kit scores is its own frozen class holding exactly what that kind knows (a probe its id, a
gold answer its field, value and answer shape); the class is the tag. Every origin names itself (``name``) and says
how a finding refers to it (``label``), so code that reads a mix of rollouts needs no case analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from hermes_envs.errors import UsageError


@dataclass(frozen=True)
class ProbeOrigin:
    """One of the kit's canned probes (``_probes.PROBES``) played on an item; ``about``: what the probe does."""

    probe: str
    about: str

    @property
    def name(self) -> str:
        return self.probe

    @property
    def label(self) -> str:
        return f"probe {self.probe!r}"


@dataclass(frozen=True)
class ControlOrigin:
    """An item-shaped negative control: the task's structured answer shape with nothing in it."""

    name: str
    about: str

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class EnvOrigin:
    """The env's own transcript number ``index`` of the ``verdict`` kind, from its ``conformance_transcripts``."""

    verdict: Literal["good", "bad"]
    index: int

    @property
    def name(self) -> str:
        return f"the env's {self.verdict} transcript #{self.index}"

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class GoldOrigin:
    """A gold-answer probe (a :class:`~hermes_envs.conformance._golds.Positive`): the kit's guess at a correct
    answer, from an item field (``source`` "field") or a tool call (``source`` "tool").

    ``value``: the gold as text (JSON for structured golds); ``template``: the answer shape it was written in
    (``"Answer: {v}"``); ``kind``: "scalar", "dict", "list", "file" or "command"."""

    name: str
    source: str
    field: str | None = None
    value: str | None = None
    template: str | None = None
    kind: str = "scalar"

    @property
    def label(self) -> str:
        return self.name

    @property
    def answer(self) -> str:
        """The gold written in its answer shape (``template`` filled with ``value``); a field gold has one."""
        if self.template is None or self.value is None:
            raise UsageError(
                f"GoldOrigin.answer should be read on a field gold; {self.name} has no answer shape (a tool gold). "
                "Fix: check origin.template (and origin.value) before reading origin.answer."
            )
        return self.template.format(v=self.value)


@dataclass(frozen=True)
class TwinOrigin:
    """A proven field gold's answer shape written with a WRONG value of the same field (``value``)."""

    name: str
    field: str | None
    value: str
    template: str
    kind: str

    @property
    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class CheckOrigin:
    """A rollout a check made and scored itself (another rendering of a proven gold, a replayed case ...)."""

    name: str

    @property
    def label(self) -> str:
        return self.name


#: Every kind of origin a :class:`~hermes_envs.conformance._observations.scoring.ScoredRollout` may carry.
Origin: TypeAlias = ProbeOrigin | ControlOrigin | EnvOrigin | GoldOrigin | TwinOrigin | CheckOrigin

__all__ = [
    "CheckOrigin",
    "ControlOrigin",
    "EnvOrigin",
    "GoldOrigin",
    "Origin",
    "ProbeOrigin",
    "TwinOrigin",
]
