"""HC601: format_prompt stores the expected answer on self; concurrent rollouts overwrite it and get each other's."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC601"]


class CurrentAnswerEnv(LetterCountEnv):
    name = "state-on-self"

    def format_prompt(self, item: dict) -> str:
        self.current_answer = item["answer"]
        return super().format_prompt(item)

    async def compute_reward(self, item, result, ctx) -> float:
        numbers = re.findall(r"-?\d+", final_answer(result))
        return 1.0 if numbers and numbers[-1] == self.current_answer else 0.0


if __name__ == "__main__":
    CurrentAnswerEnv.cli()
