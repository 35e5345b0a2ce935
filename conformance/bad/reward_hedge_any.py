"""HC413: the reward credits the reply when ANY number in it is the count, so a reply that lists several candidate
counts ("Answer: 3 ... Answer: 5") earns full credit and the policy learns to hedge instead of committing."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC413"]


class HedgeAnyEnv(LetterCountEnv):
    name = "letter-count-hedge"

    async def compute_reward(self, item, result, ctx):
        return 1.0 if item["answer"] in re.findall(r"-?\d+", final_answer(result)) else 0.0


if __name__ == "__main__":
    HedgeAnyEnv.cli()
