"""HC403: the reward returns a bool (True/False) instead of a float score."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC403"]


class BoolRewardEnv(LetterCountEnv):
    name = "reward-returns-bool"

    async def compute_reward(self, item, result, ctx):
        numbers = re.findall(r"-?\d+", final_answer(result))
        return bool(numbers) and numbers[-1] == item["answer"]


if __name__ == "__main__":
    BoolRewardEnv.cli()
