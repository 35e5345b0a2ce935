"""HC408: the reward builds its verifier synchronously on first use, freezing every other rollout meanwhile."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC408"]


def build_verifier() -> dict:
    time.sleep(0.7)  # stands for compiling a grammar / loading a model synchronously
    return {"ready": True}


class BlockingRewardEnv(LetterCountEnv):
    name = "reward-blocks-loop"
    verifier = None

    async def compute_reward(self, item, result, ctx) -> float:
        if BlockingRewardEnv.verifier is None:
            BlockingRewardEnv.verifier = build_verifier()
        return await super().compute_reward(item, result, ctx)


if __name__ == "__main__":
    BlockingRewardEnv.cli()
