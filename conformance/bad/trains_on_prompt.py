"""HC502: masks copied from the tokens ("train on everything"): the model is trained to write the prompt."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC502"]


class TrainOnAllEnv(LetterCountEnv):
    name = "trains-on-prompt"

    async def collect_trajectory(self, item):
        scored, backlog = await super().collect_trajectory(item)
        scored["masks"] = list(scored["tokens"])
        return scored, backlog


if __name__ == "__main__":
    TrainOnAllEnv.cli()
