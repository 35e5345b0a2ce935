"""HC714: compute_reward moves the curriculum (four right answers in a row: a harder level; four wrong: an easier
one), and evaluate() calls compute_reward too: an eval run moves training to other items, so training depends on
when the trainer evaluates and held-out results steer it. The update belongs in collect_trajectories."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC714"]


class RewardCurriculumEnv(LetterCountEnv):
    name = "reward-moves-curriculum"

    async def setup(self) -> None:
        await super().setup()
        self.train_items.sort(key=lambda item: len(item["word"]))
        self.level, self.window = 0, []

    async def get_next_item(self) -> dict:
        per_level = len(self.train_items) // 4
        item = self.train_items[self.level * per_level + self.index % per_level]
        self.index += 1
        return item

    async def compute_reward(self, item, result, ctx) -> float:
        score = await super().compute_reward(item, result, ctx)
        self.window = (self.window + [score])[-4:]
        if len(self.window) == 4 and len(set(self.window)) == 1:
            self.level = min(3, self.level + 1) if score == 1.0 else max(0, self.level - 1)
            self.window = []
        return score


if __name__ == "__main__":
    RewardCurriculumEnv.cli()
