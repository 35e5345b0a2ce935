"""HC410: the reward compares the last number as a string, so '1,189' for 1189 scores 0."""

from __future__ import annotations

import re

from _arith import ArithBase, last_answer

EXPECTED_FINDINGS = ["HC410"]


def grade(item, text):
    nums = re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)
    return 1.0 if nums and nums[-1] == item["answer"] else 0.0


class ArithEnv(ArithBase):
    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))


if __name__ == "__main__":
    ArithEnv.cli()
