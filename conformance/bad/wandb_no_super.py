"""HC704: wandb_log overridden without calling super(): the base's metrics and this env's are never logged."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC704"]


class NoSuperWandbEnv(LetterCountEnv):
    name = "wandb-no-super"

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        wandb_metrics["train/letters"] = len(self.train_items)
        self.last_metrics = wandb_metrics


if __name__ == "__main__":
    NoSuperWandbEnv.cli()
