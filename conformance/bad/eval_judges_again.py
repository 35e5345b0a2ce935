"""HC706: evaluate() scores each eval rollout with compute_reward (which asks the judge), then asks the judge
again for an extra metric: twice the judge calls, and two verdicts that can disagree (mistake #4)."""

import time

from _good import JudgedQAEnv

EXPECTED_FINDINGS = ["HC706"]


class EvalJudgesAgainEnv(JudgedQAEnv):
    name = "eval-judges-again"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores, agreed = [], []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
            final = next((m["content"] for m in reversed(result.messages) if m.get("content")), "")
            agreed.append(1.0 if await self._judge(item, final) else 0.0)
        await self.evaluate_log(
            metrics={
                "eval/accuracy": sum(scores) / len(scores),
                "eval/judge_agrees": sum(agreed) / len(agreed),
            },
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    EvalJudgesAgainEnv.cli()
