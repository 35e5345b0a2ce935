"""What a reader of a groups file should look at: problems found in the rollouts, each linked to its rollout.

These are checks of the recorded data itself (not the conformance catalogue): misaligned tokens and masks, nothing
to train on, groups ``serve`` would drop, non-finite scores, tool calls without results or with bad arguments.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from hermes_envs.viewer.groups import Group, Rollout


@dataclass(frozen=True)
class ViewFinding:
    """One problem in one rollout (or one group: then ``rollout`` is None)."""

    severity: str  # "error" or "warning"
    group: int
    rollout: int | None
    message: str

    @property
    def anchor(self) -> str:
        return f"g{self.group}" + (f"-r{self.rollout}" if self.rollout is not None else "")


def _rollout_findings(r: Rollout) -> list[ViewFinding]:
    out: list[ViewFinding] = []

    def add(severity: str, message: str) -> None:
        out.append(ViewFinding(severity, r.group, r.index, message))

    if len(r.tokens) != len(r.masks):
        add("error", f"tokens and masks should have the same length; got {len(r.tokens)} and {len(r.masks)}.")
    elif r.tokens and r.trained == 0:
        add("warning", "every token is masked (-100): the trainer learns nothing from this rollout.")
    if r.score is None:
        add("error", "the rollout has no numeric score.")
    elif not math.isfinite(r.score):
        add("error", f"the score should be a finite number; got {r.score}.")
    answered = {m.get("tool_call_id") for m in r.messages if m.get("role") == "tool"}
    for turn, message in enumerate(r.messages):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            name = function.get("name", "?")
            try:
                json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                add("warning", f"message {turn}: the arguments of the {name} call are not valid JSON.")
            if call.get("id") and call["id"] not in answered:
                add("warning", f"message {turn}: the {name} call ({call['id']}) has no tool result.")
    if r.messages and r.messages[-1].get("role") != "assistant":
        add(
            "warning",
            f"the transcript ends with a {r.messages[-1].get('role')!r} message, not the model's answer.",
        )
    return out


def find_problems(groups: list[Group]) -> list[ViewFinding]:
    """Every finding of every group, in file order."""
    out: list[ViewFinding] = []
    for group in groups:
        scores = [s for s in group.scores if s is not None]
        if len(group.rollouts) > 1 and len(scores) == len(group.rollouts) and len(set(scores)) == 1:
            out.append(
                ViewFinding(
                    "warning",
                    group.index,
                    None,
                    f"every rollout scores {scores[0]:g}: `serve` drops such a group "
                    "(ensure_scores_are_not_same), so the trainer never sees it.",
                )
            )
        for rollout in group.rollouts:
            out.extend(_rollout_findings(rollout))
    return out
