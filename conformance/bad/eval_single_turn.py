"""HC701: evaluate() does one chat_completion without tools: eval measures a different task (tool-use rate 0)."""

import re
import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC701"]


class SingleTurnEvalEnv(LetterCountEnv):
    name = "eval-single-turn"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        correct = 0
        for item in self.eval_items:
            completion = await self.server.chat_completion(
                messages=self.initial_messages(item), n=1, temperature=0.0
            )
            numbers = re.findall(r"-?\d+", completion.choices[0].message.content or "")
            correct += bool(numbers) and numbers[-1] == item["answer"]
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    SingleTurnEvalEnv.cli()
