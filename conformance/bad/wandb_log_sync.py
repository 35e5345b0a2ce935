"""HC704: wandb_log written as a plain `def` (as atroposlib's own docstring example shows): atroposlib awaits it and
fails, and the super() coroutine is never awaited, so nothing is logged."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC704"]


class SyncWandbLogEnv(LetterCountEnv):
    name = "wandb-log-sync"

    def wandb_log(self, wandb_metrics=None):  # should be async and await super()
        wandb_metrics = wandb_metrics or {}
        wandb_metrics["train/custom"] = 1.0
        super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    SyncWandbLogEnv.cli()
