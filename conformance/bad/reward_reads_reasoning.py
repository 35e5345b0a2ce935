"""HC413: the reward grades everything the model wrote, its reasoning_content too ("use the full output"): a wrong
answer gains credit when the model only thought of the right number, and a right one loses it after a doubt."""

import re

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC413"]


class ReasoningReadEnv(LetterCountEnv):
    name = "reward-reads-reasoning"

    async def compute_reward(self, item, result, ctx) -> float:
        said = [
            f"{m.get('content') or ''}\n{m.get('reasoning_content') or ''}"
            for m in result.messages
            if m.get("role") == "assistant"
        ]
        numbers = re.findall(r"-?\d+", said[-1] if said else "")
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    ReasoningReadEnv.cli()
