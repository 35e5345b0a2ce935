"""HC403: full credit plus a brevity bonus, so a short correct answer scores 1.2 (only correct answers go over 1)."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC403"]


class BonusOverOneEnv(LetterCountEnv):
    name = "reward-bonus-over-one"

    async def compute_reward(self, item, result, ctx):
        text = final_answer(result)
        numbers = re.findall(r"-?\d+", text)
        if not (numbers and numbers[-1] == item["answer"]):
            return 0.0
        return 1.0 + (0.2 if len(text) < 40 else 0.0)


if __name__ == "__main__":
    BonusOverOneEnv.cli()
