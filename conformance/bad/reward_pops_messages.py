"""HC405: the reward pops the last message to read the answer, so the trainer tokenizes a truncated transcript."""

import re

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC405", "HC411"]  # it reads whatever message is last, a tool result too


class PoppingRewardEnv(LetterCountEnv):
    name = "reward-pops-messages"

    async def compute_reward(self, item, result, ctx) -> float:
        last = result.messages.pop()
        numbers = re.findall(r"-?\d+", last.get("content") or "")
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    PoppingRewardEnv.cli()
