"""HC502: only the first prompt token is masked (an off-by-one in a hand-built mask): the rest of the prompt trains."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC502"]


class FirstTokenMaskEnv(LetterCountEnv):
    name = "masks-only-first-token"

    async def collect_trajectory(self, item):
        scored, backlog = await super().collect_trajectory(item)
        tokens = scored["tokens"]
        scored["masks"] = [-100] + list(tokens[1:])
        return scored, backlog


if __name__ == "__main__":
    FirstTokenMaskEnv.cli()
