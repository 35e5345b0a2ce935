"""HC408: the reward asks a remote verifier with a synchronous HTTP call on every rollout (``requests.post``,
here a 0.6 s ``time.sleep`` standing for the round trip): each call freezes every other rollout."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC408"]


def verify_remotely(word: str, answer: str) -> bool:
    time.sleep(0.6)  # stands for requests.post(VERIFIER_URL, json=...) without a timeout budget
    return True


class SyncHttpJudgeEnv(LetterCountEnv):
    name = "reward-sync-http-judge"

    async def compute_reward(self, item, result, ctx) -> float:
        score = await super().compute_reward(item, result, ctx)
        if score and not verify_remotely(item["word"], item["answer"]):
            return 0.0
        return score


if __name__ == "__main__":
    SyncHttpJudgeEnv.cli()
