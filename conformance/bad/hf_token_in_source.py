"""HC901: a Hugging Face token pasted into the source "so the private dataset downloads everywhere"."""

import os

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC901"]

os.environ.setdefault("HF_TOKEN", "hf_Qm3vT8kLp2ZxN7wR4yB9cF1dG6hJ0sA5eU")


class TokenInSourceEnv(LetterCountEnv):
    name = "hf-token-in-source"


if __name__ == "__main__":
    TokenInSourceEnv.cli()
