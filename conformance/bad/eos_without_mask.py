"""HC501: an EOS token appended to the tokens but not to the masks: tokens and masks no longer line up."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC501"]


class EosEnv(LetterCountEnv):
    name = "eos-without-mask"

    async def collect_trajectory(self, item):
        scored, backlog = await super().collect_trajectory(item)
        scored["tokens"] = scored["tokens"] + [self.tokenizer.eos_token_id or 0]
        return scored, backlog


if __name__ == "__main__":
    EosEnv.cli()
