"""HC508: collect_trajectories feeds each group's mean score to a success-rate window that picks short or long words;
a group dropped because the model server failed comes back None and is recorded as a mean of 0, so every outage
pushes training back to the short words although the model answered nothing."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC508"]


class OutageCurriculumEnv(LetterCountEnv):
    name = "outage-feeds-curriculum"

    async def setup(self) -> None:
        await super().setup()
        self.train_items.sort(key=lambda item: len(item["word"]))
        self.recent = []

    async def get_next_item(self) -> dict:
        rate = sum(self.recent) / len(self.recent) if self.recent else 0.5
        half = len(self.train_items) // 2
        pool = self.train_items[half:] if rate >= 0.5 else self.train_items[:half]
        item = pool[self.index % len(pool)]
        self.index += 1
        return item

    async def collect_trajectories(self, item):
        group, backlog = await super().collect_trajectories(item)
        scores = group["scores"] if group is not None else []
        self.recent = (self.recent + [sum(scores) / len(scores) if scores else 0.0])[-8:]
        return group, backlog


if __name__ == "__main__":
    OutageCurriculumEnv.cli()
