"""HC508 (an outage is not a wrong answer in the env's own state) blames a collect_trajectories that records a
dropped group as a score of 0 in state get_next_item reads, and passes the same env when it skips dropped groups,
and one that only counts the groups it was given (the same whatever the model answered)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = """
import sys
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv


class WindowEnv(LetterCountEnv):
    name = "fault-state"

    async def setup(self):
        await super().setup()
        self.recent, self.groups = [], 0

    async def collect_trajectories(self, item):
        group, backlog = await super().collect_trajectories(item)
        self.groups += 1
{record}        return group, backlog
"""

_AS_ZERO = (
    "        scores = group['scores'] if group is not None else []\n"
    "        self.recent = (self.recent + [sum(scores) / len(scores) if scores else 0.0])[-8:]\n"
)
_SKIPPED = (
    "        if group is not None and group['scores']:\n"
    "            self.recent = (self.recent + [sum(group['scores']) / len(group['scores'])])[-8:]\n"
)

#: case -> (what collect_trajectories records, HC508's outcome)
CASES = {
    "dropped_group_recorded_as_zero": (_AS_ZERO, Status.FAILED),
    "dropped_group_skipped": (_SKIPPED, Status.PASSED),
    "groups_counted_only": ("", Status.PASSED),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hc508_blames_an_outage_recorded_as_wrong_answers(case: str, tmp_path: Path) -> None:
    record, expected = CASES[case]
    env = tmp_path / f"{case}_env.py"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), record=record))
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC508"])) as session:
        outcome = session.run("HC508")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == "self.recent" and "HTTP 500" in finding.message
