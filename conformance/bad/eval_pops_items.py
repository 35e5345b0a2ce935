"""HC707: evaluate() pops its eval items as it goes ("so nothing is evaluated twice"): the first eval works, every
later one (the trainer calls it every steps_per_eval) evaluates nothing and logs nothing."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC707"]


class PoppingEvalEnv(LetterCountEnv):
    name = "eval-pops-items"

    async def evaluate(self, *args, **kwargs) -> None:
        start, scores = time.time(), []
        while self.eval_items:
            item = self.eval_items.pop()
            task_id = f"eval-pop-{len(self.eval_items)}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        if scores:
            await self.evaluate_log(
                metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
            )


if __name__ == "__main__":
    PoppingEvalEnv.cli()
