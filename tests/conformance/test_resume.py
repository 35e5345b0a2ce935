"""HC715 (a resumed run serves what the saved run would have) blames a save_checkpoint that leaves out the level
get_next_item reads, and passes the same env when it saves the level, or keeps only a counter of groups it never
reads; an env that does not override save_checkpoint is not judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = """
import sys
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv


class LevelEnv(LetterCountEnv):
    name = "resume"

    async def setup(self):
        await super().setup()
        self.train_items.sort(key=lambda item: len(item["word"]))
        self.level, self.streak, self.groups = 0, 0, 0

    async def get_next_item(self):
        per_level = len(self.train_items) // 3
        item = self.train_items[self.level * per_level + self.index % per_level]
        self.index += 1
        return item

    async def collect_trajectories(self, item):
        group, backlog = await super().collect_trajectories(item)
        self.groups += 1
        if group is not None and group["scores"] and min(group["scores"]) == 1.0:
            self.streak += 1
            if self.streak == 2:
                self.level, self.streak = min(2, self.level + 1), 0
        return group, backlog
{save}"""

_SAVE = """
    def save_checkpoint(self, step, data=None):
        data = dict(data or {{}})
        data.update({saved})
        super().save_checkpoint(step, data)
"""

#: case -> (the save_checkpoint override, HC715's outcome)
CASES = {
    "index_only": (_SAVE.format(saved='{"index": self.index}'), Status.FAILED),
    "level_saved": (
        _SAVE.format(saved='{"index": self.index, "level": self.level, "streak": self.streak}'),
        Status.PASSED,
    ),
    "no_checkpoint": ("", Status.NOT_APPLICABLE),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hc715_blames_a_checkpoint_missing_what_get_next_item_reads(case: str, tmp_path: Path) -> None:
    save, expected = CASES[case]
    env = tmp_path / f"{case}_env.py"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), save=save))
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC715"])) as session:
        outcome = session.run("HC715")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == "self.level" and "'level'" in finding.fix
