"""HC406: half the score for "finishing naturally": a refusal or an echo of the prompt earns 0.5."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC406"]


class FinishCreditEnv(LetterCountEnv):
    name = "reward-credits-finishing"

    async def compute_reward(self, item, result, ctx) -> float:
        correct = await super().compute_reward(item, result, ctx)
        return 0.5 * correct + 0.5 * float(result.finished_naturally)


if __name__ == "__main__":
    FinishCreditEnv.cli()
