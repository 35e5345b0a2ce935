"""HC407: answers stored as int but compared with the parsed str: no answer can ever be right, every score is 0."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC407"]


class IntAnswerEnv(LetterCountEnv):
    name = "reward-type-mismatch"

    async def setup(self) -> None:
        await super().setup()
        for item in self.train_items + self.eval_items:
            item["answer"] = int(item["answer"])

    async def compute_reward(self, item, result, ctx) -> float:
        numbers = re.findall(r"-?\d+", final_answer(result))
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    IntAnswerEnv.cli()
