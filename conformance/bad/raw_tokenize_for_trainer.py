"""HC501 (a warning): a raw BaseEnv that tokenizes with atroposlib's tokenize_for_trainer, the usual way. Under
transformers >= 5 apply_chat_template returns a BatchEncoding, so "tokens" is a dict and every rollout is
untrainable; the env's code is correct, the installed pair is not, so HC501 names the versions and the pin as a
warning (an error here was a false alarm, issue #29). Under transformers < 5 it has nothing to report."""

import sys
from pathlib import Path

from atroposlib.utils.tokenize_for_trainer import tokenize_for_trainer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "good"))

from raw_atropos_env import RawSumEnv

EXPECTED_FINDINGS = ["HC501", "HC507"]


class TokenizeForTrainerEnv(RawSumEnv):
    name = "tokenize-for-trainer"

    def tokenize(self, messages: list[dict]) -> tuple[list[int], list[int]]:
        out = tokenize_for_trainer(self.tokenizer, messages)
        return out["tokens"], out["masks"]


if __name__ == "__main__":
    TokenizeForTrainerEnv.cli()
