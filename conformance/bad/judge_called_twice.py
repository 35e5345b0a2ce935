"""HC409: the judge is asked twice per rollout (once for the score, once more "to be sure"): double the cost of
every group, and two verdicts that can disagree."""

from _good import JudgedQAEnv

EXPECTED_FINDINGS = ["HC409"]


class JudgeTwiceEnv(JudgedQAEnv):
    name = "judge-called-twice"

    async def compute_reward(self, item, result, ctx) -> float:
        first = await super().compute_reward(item, result, ctx)
        second = await super().compute_reward(item, result, ctx)
        return (first + second) / 2


if __name__ == "__main__":
    JudgeTwiceEnv.cli()
