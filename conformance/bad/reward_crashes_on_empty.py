"""HC402: the reward takes the last line of the answer, which raises IndexError when the model said nothing."""

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC402"]


class LastLineEnv(LetterCountEnv):
    name = "reward-crashes-on-empty"

    async def compute_reward(self, item, result, ctx) -> float:
        last_line = final_answer(result).splitlines()[-1]
        return 1.0 if last_line.split()[-1].strip(".") == item["answer"] else 0.0


if __name__ == "__main__":
    LastLineEnv.cli()
