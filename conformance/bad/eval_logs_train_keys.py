"""HC705: evaluate() passes its accuracy to evaluate_log under a train/* key, so it lands in the training curve."""

import time
import uuid

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC705"]


class EvalTrainKeysEnv(LetterCountEnv):
    name = "eval-logs-train-keys"

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            task_id = str(uuid.uuid4())
            messages = self.initial_messages(item)
            result = await self.run_agent(messages, task_id=task_id, temperature=0.0, tools=(tools, names))
            correct += await self.score_rollout(item, result, task_id) == 1.0
        await self.evaluate_log(
            metrics={"train/percent_correct": correct / len(self.eval_items)},
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    EvalTrainKeysEnv.cli()
