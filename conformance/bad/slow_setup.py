"""HC205: setup() builds an index for a long time on every start (here: longer than the corpus' setup_seconds)."""

import asyncio

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC205"]


class SlowSetupEnv(LetterCountEnv):
    name = "slow-setup"

    async def setup(self) -> None:
        await asyncio.sleep(3.5)  # stands for tokenizing a large corpus on every start
        await super().setup()


if __name__ == "__main__":
    SlowSetupEnv.cli()
