"""HC206: the train/eval split is drawn with the unseeded global random, so every process start (a restart, a
resume, another node) holds out other items and trains on ones an earlier run evaluated on."""

import random

from _good import LetterCountEnv, make_items

EXPECTED_FINDINGS = ["HC206"]


class UnseededSplitEnv(LetterCountEnv):
    name = "split-unseeded-shuffle"

    async def setup(self) -> None:
        items = make_items()
        random.shuffle(items)  # the mistake: the global random, seeded afresh by every interpreter
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0


if __name__ == "__main__":
    UnseededSplitEnv.cli()
