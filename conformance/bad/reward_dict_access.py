"""HC401: AgentResult read like a dict with a final_response key (it is a dataclass and has no such field)."""

import re

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC401"]


class DictResultEnv(LetterCountEnv):
    name = "reward-dict-access"

    async def compute_reward(self, item, result, ctx) -> float:
        numbers = re.findall(r"-?\d+", result["final_response"])
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    DictResultEnv.cli()
