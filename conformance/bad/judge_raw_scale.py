"""HC403: the judge grades 0-10 and the reward returns its grade as it is: a summary the judge likes scores 8.0,
not 0.8, and advantages are computed on a scale ten times too large next to every 0-1 env of the run."""

from _good import RubricJudgeEnv, rubric_final

EXPECTED_FINDINGS = ["HC402", "HC403"]


class RawScaleJudgeEnv(RubricJudgeEnv):
    name = "judge-raw-scale"

    async def compute_reward(self, item, result, ctx):
        summary = rubric_final(result)
        if not summary or len(summary.split()) > 40:
            return 0.0
        completion = await self.server.chat_completion(
            messages=[{"role": "user", "content": f"Grade 0-10 (SCORE: n): {item['passage']}\n\n{summary}"}],
            n=1,
            temperature=0.0,
            max_tokens=8,
        )
        reply = completion.choices[0].message.content or ""
        grade = reply.split("SCORE:")[-1].strip()
        if not grade.isdigit():
            raise ValueError(f"the judge's reply is not a 0-10 score: {reply!r}")
        return float(grade)


if __name__ == "__main__":
    RawScaleJudgeEnv.cli()
