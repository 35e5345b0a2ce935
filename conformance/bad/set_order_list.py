"""HC404: the reward compares list(set(answer)) with the gold list, so its score follows the hash order of a set."""

from __future__ import annotations

import _good
from _good import last_answer, parse_list

EXPECTED_FINDINGS = ["HC404"]


def grade(item, text):
    want = [str(x).lower() for x in item["items"]]
    return 1.0 if list(set(parse_list(text))) == want else 0.0


class ListEnv(_good.ListEnv):
    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))


if __name__ == "__main__":
    ListEnv.cli()
