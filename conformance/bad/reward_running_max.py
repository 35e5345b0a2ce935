"""HC413: the reward scales a length bonus by the best raw score seen so far ("keep it in [0, 1]"): the same
correct answer scores 1.0 first and less once a longer word was solved, so a score depends on what came before."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC410", "HC413"]


class RunningMaxEnv(LetterCountEnv):
    name = "reward-running-max"
    best_raw = 0.0

    async def compute_reward(self, item, result, ctx) -> float:
        numbers = re.findall(r"-?\d+", final_answer(result))
        raw = 1.0 + len(item["word"]) if numbers and numbers[-1] == item["answer"] else 0.0
        self.best_raw = max(self.best_raw, raw)
        return raw / self.best_raw if self.best_raw else 0.0


if __name__ == "__main__":
    RunningMaxEnv.cli()
