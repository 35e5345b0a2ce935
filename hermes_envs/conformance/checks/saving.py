"""Data (HC207): what collect_trajectories returns can be saved and sent as JSON.

atroposlib sends every scored group to the trainer's API as ``json.dumps(group)`` (and writes it with jsonlines
when ``data_path_to_save_groups`` is set): a group holding an object JSON cannot write (an SDK message object, a
set, a numpy integer, a tensor) never reaches the trainer.
"""

from __future__ import annotations

from hermes_envs.conformance._findings import Finding, NotApplicable, Skip
from hermes_envs.conformance._registry import check
from hermes_envs.conformance._session import EnvSession
from hermes_envs.conformance.checks.data import unserialisable


@check(
    "HC207",
    "group-json",
    "the scored group can be sent to the trainer as JSON",
    requires=("HC501",),
    why=(
        "atroposlib sends every scored group to the trainer as JSON; a group holding an SDK object, a set or numpy "
        "values fails to send, and the run trains on nothing."
    ),
    fix="Messages as dicts, tokens and masks as lists of int, scores as float, lists instead of sets.",
)
def group_json(s: EnvSession) -> list[Finding]:
    """A scored group holding objects JSON cannot write (the SDK's message object appended to ``messages``, a set
    in ``overrides``, numpy integers as tokens): atroposlib's ``json.dumps`` of the group fails when it is sent, so
    the trainer never gets a single group (and ``data_path_to_save_groups`` cannot save it)."""
    from hermes_envs.conformance._observations.group import CollectedGroup
    from hermes_envs.conformance.checks.trajectory import eval_only

    note = eval_only(s)
    if note:
        raise NotApplicable(note)
    group = s.observe(CollectedGroup).group
    if not group:
        raise Skip("collect_trajectories returned no group (see HC501)")
    sent = dict(group) if isinstance(group, dict) else group
    if isinstance(sent, dict) and s.run("HC501").findings:
        # tokens and masks that are not lists of ints are HC501's finding (with its cause: an installation whose
        # tokenize_for_trainer returns a BatchEncoding is a warning there, not an error here)
        sent = {k: v for k, v in sent.items() if k not in ("tokens", "masks")}
    where = unserialisable(sent, "group", qualified=True)
    if where is None:
        return []
    return [
        Finding(
            "HC207",
            f"the group collect_trajectories returns should be JSON (atroposlib sends it with json.dumps); "
            f"{where} cannot be written, so sending it to the trainer fails and no group is ever trained on.",
            "put only JSON values in the group: messages as dicts ({'role': ..., 'content': ...}, e.g. "
            "`message.model_dump()` of an SDK object), tokens and masks as lists of int (`.tolist()`), scores as "
            "float, lists instead of sets.",
            subject="the scored group",
        )
    ]
