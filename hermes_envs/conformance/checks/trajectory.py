"""HC5xx — trajectories: a group collected through the fake server is what atroposlib can train on."""

from __future__ import annotations

import math

from hermes_envs.conformance.findings import Finding
from hermes_envs.conformance.probes import call_each_tool_then
from hermes_envs.conformance.registry import check
from hermes_envs.conformance.session import EnvSession


@check("HC501", "smoke-group", "collect_trajectories gives group_size aligned tokens/masks/scores",
       requires=("HC201",))
def smoke_group(s: EnvSession) -> list[Finding]:
    """A rollout group that crashes, is empty, misaligned, trains on the prompt, or drops the tool messages."""
    env = s.env()
    item = s.probe_items()[0]
    group_size = env.config.group_size
    with s.responding(call_each_tool_then("I think the answer is 0.")) as made:
        try:
            group, _backlog = s.run_env(lambda e: e.collect_trajectories(item))
        except Exception as exc:
            return [Finding("HC501", f"collect_trajectories(item) should return a scored group; it raised "
                            f"{type(exc).__name__}: {exc}.",
                            "run the env against the fake server (hermes-envs fake-server) to see where it fails.")]
    if isinstance(group, list):
        group = next((g for g in group if g), None)
    if not group:
        return [Finding("HC501", f"collect_trajectories(item) should return a scored group of {group_size}; got "
                        f"{group!r} after {len(made)} model requests.",
                        "make sure every rollout returns a ScoredDataItem (tokens, masks, scores).")]
    findings = []
    tokens, masks, scores = group.get("tokens") or [], group.get("masks") or [], group.get("scores") or []
    if not (len(tokens) == len(masks) == len(scores) == group_size):
        findings.append(Finding("HC501", f"a group should hold {group_size} tokens, masks and scores; got "
                                f"{len(tokens)} tokens, {len(masks)} masks, {len(scores)} scores.",
                                "return one ScoredDataItem per rollout from collect_trajectory."))
    for i, (tok, mask) in enumerate(zip(tokens, masks)):
        if len(tok) != len(mask) or not tok:
            findings.append(Finding("HC501", f"rollout {i} should have equally long, non-empty tokens and masks; "
                                    f"got {len(tok)} tokens and {len(mask)} masks.",
                                    "build masks from the same tokenization as tokens.", subject=f"rollout {i}"))
            break
        if mask and mask[0] != -100:
            findings.append(Finding("HC501", f"rollout {i} should mask its prompt tokens with -100; the first "
                                    f"position is {mask[0]}, so the model would be trained on the prompt.",
                                    "set masks to -100 on every prompt/tool position.", subject=f"rollout {i}"))
            break
        if all(m == -100 for m in mask):
            findings.append(Finding("HC501", f"rollout {i} should train on the model's own tokens; every mask "
                                    "position is -100, so the rollout teaches nothing.",
                                    "leave the assistant tokens unmasked.", subject=f"rollout {i}"))
            break
    for i, score in enumerate(scores):
        if not isinstance(score, (int, float)) or not math.isfinite(score):
            findings.append(Finding("HC501", f"score {i} should be a finite number; got {score!r}.",
                                    "return a float from compute_reward.", subject=f"rollout {i}"))
            break
    offered = any(c.body.get("tools") for c in made)
    messages = group.get("messages") or []
    if offered and messages and not any(m.get("role") == "tool" for conv in messages for m in conv or []):
        findings.append(Finding("HC501", "a group whose model called tools should keep the tool-role messages in "
                                "`messages`; none were found, so the trainer never sees the tool results.",
                                "return result.messages unchanged in the ScoredDataItem."))
    return findings
