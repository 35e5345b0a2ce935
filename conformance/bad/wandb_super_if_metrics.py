"""HC704: super().wandb_log only when metrics were passed in; atroposlib calls wandb_log({}) and wandb_log() every
step, so in a real run nothing is ever logged."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC704"]


class SuperIfMetricsEnv(LetterCountEnv):
    name = "wandb-super-if-metrics"

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        if wandb_metrics:
            wandb_metrics["train/items_seen"] = self.index
            await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    SuperIfMetricsEnv.cli()
