"""HC702 (a warning): evaluate() runs the agent loop at the default temperature (1.0), so eval numbers are noise."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC702"]


class HotEvalEnv(LetterCountEnv):
    name = "eval-hot"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id)
            scores.append(await self.score_rollout(item, result, task_id))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    HotEvalEnv.cli()
