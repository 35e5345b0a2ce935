"""HC410: the reward compares words case-sensitively, so 'paris' or 'PARIS' for Paris scores 0."""

from __future__ import annotations

import re

from _trivia import TriviaBase

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC410"]


def norm(s):
    s = re.sub(r"[*_`#>\"'.,!?()\[\]]", " ", s)
    return " ".join(s.split())


def grade(item, text):
    got, want = norm(text), norm(item["answer"])
    return 1.0 if want and (got == want or f" {want} " in f" {got} ") else 0.0


class TriviaEnv(TriviaBase):
    async def compute_reward(self, item, result, ctx):
        return grade(item, final_response(result) or "")


if __name__ == "__main__":
    TriviaEnv.cli()
