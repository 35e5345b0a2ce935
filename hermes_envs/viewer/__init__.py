"""The rollout viewer (``hermes-envs view out/g.jsonl``): one self-contained HTML page per groups file."""

from hermes_envs.viewer.findings import ViewFinding, find_problems
from hermes_envs.viewer.groups import Group, GroupFileError, Rollout, load_groups
from hermes_envs.viewer.render import default_output, render_html, write_view

__all__ = [
    "Group",
    "GroupFileError",
    "Rollout",
    "ViewFinding",
    "default_output",
    "find_problems",
    "load_groups",
    "render_html",
    "write_view",
]
