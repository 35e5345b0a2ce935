"""HC204: items carry a set of accepted answers, which JSON (saved groups, eval samples, wandb) cannot write."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC204"]


class SetItemsEnv(LetterCountEnv):
    name = "items-with-sets"

    async def setup(self) -> None:
        await super().setup()
        for item in self.train_items:
            item["accepted"] = {item["answer"]}


if __name__ == "__main__":
    SetItemsEnv.cli()
