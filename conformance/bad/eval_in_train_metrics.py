"""HC705: evaluate() scores through the same buffer that wandb_log reports as train/percent_correct, so the
training curve mixes in held-out results at temperature 0."""

from _good import JudgedQAEnv

EXPECTED_FINDINGS = ["HC705"]


class EvalInTrainMetricsEnv(JudgedQAEnv):
    name = "eval-in-train-metrics"

    async def setup(self) -> None:
        await super().setup()
        self.percent_correct_buffer: list[float] = []

    async def compute_reward(self, item, result, ctx) -> float:
        score = await super().compute_reward(item, result, ctx)
        self.percent_correct_buffer.append(score)
        return score

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        if self.percent_correct_buffer:
            wandb_metrics["train/percent_correct"] = sum(self.percent_correct_buffer) / len(
                self.percent_correct_buffer
            )
        self.percent_correct_buffer = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    EvalInTrainMetricsEnv.cli()
