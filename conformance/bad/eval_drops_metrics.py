"""HC703: evaluate() computes the accuracy and then drops it: nothing is logged or returned."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC703"]


class SilentEvalEnv(LetterCountEnv):
    name = "eval-drops-metrics"

    async def evaluate(self, *args, **kwargs) -> None:
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        self.last_accuracy = sum(scores) / len(scores)


if __name__ == "__main__":
    SilentEvalEnv.cli()
