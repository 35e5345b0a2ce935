"""HC406, HC413: partial credit counts a missing field as right (got.get(k, v) == v), so {} earns full marks and a
reply that leaves a field out keeps full credit."""

from __future__ import annotations

import _good
from _good import parse_object, same

from hermes_envs import final_response

EXPECTED_FINDINGS = ["HC406", "HC413"]


def grade(item, text):
    got = parse_object(text)
    if got is None:
        return 0.0
    gold = item["fields"]
    return sum(1.0 for k, v in gold.items() if same(got.get(k, v), v)) / len(gold)


class PeopleEnv(_good.PeopleEnv):
    async def compute_reward(self, item, result, ctx):
        return grade(item, final_response(result) or "")


if __name__ == "__main__":
    PeopleEnv.cli()
