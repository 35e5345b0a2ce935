"""HC413: the judge's verdicts are cached by the reply text alone ("the same reply is sampled often: judge it
once"), so the same words written for another question get the first question's verdict."""

from _good import JudgedQAEnv, final_answer

EXPECTED_FINDINGS = ["HC413"]


class CachedJudgeEnv(JudgedQAEnv):
    name = "judged-qa-cached"

    async def compute_reward(self, item, result, ctx):
        cache = self.__dict__.setdefault("verdicts", {})
        text = final_answer(result)
        if text not in cache:
            cache[text] = await super().compute_reward(item, result, ctx)
        return cache[text]


if __name__ == "__main__":
    CachedJudgeEnv.cli()
