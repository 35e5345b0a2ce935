"""HC713: evaluate() grades with its own code, a \\boxed{n} answer only, where the training reward credits the last
number of the reply: every answer training rewards ("Answer: 3") counts as wrong in eval, so the eval curve
measures a format the policy is never trained on."""

import re
import time

from _good import LetterCountEnv, final_answer

from hermes_envs.tools import cleanup_sandbox

EXPECTED_FINDINGS = ["HC713"]


class OwnGraderEvalEnv(LetterCountEnv):
    name = "eval-own-grader"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        correct = 0
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            cleanup_sandbox(task_id)
            boxed = re.findall(r"\\boxed\{(-?\d+)\}", final_answer(result))
            correct += bool(boxed) and boxed[-1] == item["answer"]
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    OwnGraderEvalEnv.cli()
