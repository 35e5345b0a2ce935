"""HC404: random noise added to wrong answers "so groups never have identical scores": the signal becomes noise."""

import random

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC404"]


class NoisyRewardEnv(LetterCountEnv):
    name = "reward-noise"

    async def compute_reward(self, item, result, ctx) -> float:
        score = await super().compute_reward(item, result, ctx)
        return score if score == 1.0 else random.uniform(0.0, 0.05)


if __name__ == "__main__":
    NoisyRewardEnv.cli()
