"""HC401 (warning): the reward reads the final answer with getattr(result, "final_response", "") — AgentResult has
no such field, so the reward always gets "" and never credits a right answer, with no error anywhere (mistake #1).
HC407 sees the symptom: no correct answer beats the controls."""

import re

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC401", "HC407"]


class GetattrFallbackEnv(LetterCountEnv):
    name = "reward-getattr-fallback"

    async def compute_reward(self, item, result, ctx) -> float:
        text = getattr(result, "final_response", "") or ""
        numbers = re.findall(r"-?\d+", text)
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    GetattrFallbackEnv.cli()
