"""HC714 (evaluate() leaves training alone) blames only state that changes what get_next_item serves: an eval that
draws from the env's random generator, or fills a metrics buffer, passes; one that advances the training cursor or
moves a curriculum from compute_reward, or a level kept in an object of the author's class, fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = """
import random, sys
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv


class Curriculum:
    def __init__(self):
        self.level = 0
        self.evals = 0


class StateEnv(LetterCountEnv):
    name = "eval-state"

    async def setup(self):
        await super().setup()
        self.rng = random.Random(7)
        self.buffer = []
        self.curriculum = Curriculum()

    async def get_next_item(self):
{next_item}

    async def compute_reward(self, item, result, ctx):
        score = await super().compute_reward(item, result, ctx)
        self.buffer.append(score)
        return score

    async def evaluate(self, *args, **kwargs):
{evaluate}        await super().evaluate(*args, **kwargs)
"""

_CURSOR = "        item = self.train_items[self.index % len(self.train_items)]\n        self.index += 1\n        return item"

_LEVELLED = (
    "        item = self.train_items[(self.curriculum.level * 3 + self.index) % len(self.train_items)]\n"
    "        self.index += 1\n        return item"
)

#: case -> (get_next_item's body, lines run at the start of evaluate(), HC714's outcome, the attribute blamed)
CASES = {
    # the eval draws from the env's RNG, which training draws from too: only the order moves, not judged
    "shared_rng": (
        "        return self.rng.choice(self.train_items)",
        "        self.rng.random()\n",
        Status.PASSED,
        None,
    ),
    # a scores buffer the reward fills (what wandb_log reads): training items are the same
    "metrics_buffer": (_CURSOR, "", Status.PASSED, None),
    # the eval 'warms up' by drawing a training item: the trainer's next item is skipped
    "eval_draws_training": (_CURSOR, "        await self.get_next_item()\n", Status.FAILED, "self.index"),
    # a curriculum kept in an object of the author's class: the eval moves its level, training serves other items
    "object_level_moved": (
        _LEVELLED,
        "        self.curriculum.level += 1\n",
        Status.FAILED,
        "self.curriculum.level",
    ),
    # the same object counts evals, which get_next_item never reads
    "object_counter_moved": (_LEVELLED, "        self.curriculum.evals += 1\n", Status.PASSED, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hc714_blames_only_state_that_moves_training(case: str, tmp_path: Path) -> None:
    next_item, evaluate, expected, blamed = CASES[case]
    env = tmp_path / f"{case}_env.py"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), next_item=next_item, evaluate=evaluate))
    from hermes_envs.tools import registry

    with (
        registry.isolated(),
        EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC714"])) as session,
    ):
        outcome = session.run("HC714")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == blamed and "get_next_item" in finding.message
