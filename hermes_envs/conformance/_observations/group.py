"""One ``collect_trajectories(item)`` group as atroposlib would receive it, the fake model calling every tool then
answering (asked again with a different answer per rollout when the env dropped a group of tied scores)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_envs.conformance._golds import varied_answers
from hermes_envs.conformance._observations.rollouts import probe_items
from hermes_envs.conformance._probes import Responder, call_each_tool_then
from hermes_envs.conformance._session import EnvSession


@dataclass(frozen=True)
class CollectedGroup:
    """``group``: the first non-empty ScoredDataGroup collect_trajectories returned (None if none); ``error``: what
    it raised; ``requests``: the model requests it made; ``leaked_sandboxes``: task ids it never cleaned up;
    ``retried``: whether it was asked a second time with varied answers."""

    group: Any
    error: str | None
    requests: tuple[Any, ...]
    leaked_sandboxes: tuple[str, ...]
    retried: bool

    @classmethod
    def build(cls, s: EnvSession) -> CollectedGroup:
        item = probe_items(s)[0]
        group, error, made, leaked = _collect(s, item, call_each_tool_then("I think the answer is 0."))
        retried = False
        if group is None and error is None:
            # No group and no error: an env that drops a group whose scores all tie (atroposlib's gsm8k returns
            # None) got the same answer in every rollout. Ask again with a different answer per rollout (and per
            # choice).
            retried = True
            group, error, made_again, leaked_again = _collect(s, item, varied_answers(item))
            made = [*made, *made_again]
            leaked = [*leaked, *leaked_again]
        return cls(
            group=group, error=error, requests=tuple(made), leaked_sandboxes=tuple(leaked), retried=retried
        )


def _collect(s: EnvSession, item: Any, responder: Responder) -> tuple[Any, str | None, list[Any], list[str]]:
    """``collect_trajectories(item)`` once with ``responder``: (first non-empty group or None, what it raised,
    the model requests, the sandboxes it left)."""
    group, error = None, None
    with s.sandbox_leaks() as leaked, s.responding(responder) as made:
        try:
            group, _backlog = s.run_env(lambda e: e.collect_trajectories(item), phase="trajectories")
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    if isinstance(group, list):
        group = next((g for g in group if g), None)
    return group, error, made, leaked
