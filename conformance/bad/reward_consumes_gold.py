"""HC405: the reward walks the answer against the item's own list of expected entries and pops each one it matches,
so the first correct rollout empties the shared item: every later rollout of it (the rest of the group, the next
epoch, evaluate()) is graded against an empty list and a correct answer scores 0."""

import copy

from _good import ListEnv, last_answer, parse_list

EXPECTED_FINDINGS = ["HC405", "HC413"]  # HC413: the same gold scores 0 once the item is emptied


class ConsumesGoldEnv(ListEnv):
    name = "reward-consumes-gold"

    async def setup(self):
        await super().setup()
        # Items of its own: the corpus shares ListEnv's module data with other envs run in the same process.
        self.test, self.train = copy.deepcopy(self.test), copy.deepcopy(self.train)

    async def compute_reward(self, item, result, ctx):
        want = item["items"]  # the mistake: the item's own list, not a copy (`list(item["items"])`)
        for entry in parse_list(last_answer(result)):
            if not want or entry != str(want[0]).lower():
                return 0.0
            want.pop(0)
        return 0.0 if want else 1.0


if __name__ == "__main__":
    ConsumesGoldEnv.cli()
