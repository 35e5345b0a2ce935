"""HC202: the eval items are the first training items (no held-out split), so eval measures memorisation."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC202"]


class NoSplitEnv(LetterCountEnv):
    name = "eval-is-train"

    async def setup(self) -> None:
        await super().setup()
        self.train_items = self.eval_items + self.train_items


if __name__ == "__main__":
    NoSplitEnv.cli()
