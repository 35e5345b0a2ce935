"""HC715: the curriculum moves to longer words after two perfect groups in a row, and save_checkpoint stores the item
counter only: a run resumed from the checkpoint starts again at the shortest words whatever level it had reached."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC715"]


class CheckpointLevelEnv(LetterCountEnv):
    name = "checkpoint-misses-level"

    async def setup(self) -> None:
        await super().setup()
        self.train_items.sort(key=lambda item: len(item["word"]))
        self.level, self.streak = 0, 0

    async def get_next_item(self) -> dict:
        per_level = len(self.train_items) // 3
        item = self.train_items[self.level * per_level + self.index % per_level]
        self.index += 1
        return item

    async def collect_trajectories(self, item):
        group, backlog = await super().collect_trajectories(item)
        if group is not None and group["scores"] and min(group["scores"]) == 1.0:
            self.streak += 1
            if self.streak == 2:
                self.level, self.streak = min(2, self.level + 1), 0
        return group, backlog

    def save_checkpoint(self, step, data=None):
        data = dict(data or {})
        data["index"] = self.index
        super().save_checkpoint(step, data)


if __name__ == "__main__":
    CheckpointLevelEnv.cli()
