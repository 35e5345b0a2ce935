"""HC403 on a raw atroposlib BaseEnv (no compute_reward): scores on a 0..100 scale, 10 for any number."""

import re

from _good import RawSumEnv

EXPECTED_FINDINGS = ["HC403", "HC507"]


class RawPercentEnv(RawSumEnv):
    name = "raw-percent-scores"

    @staticmethod
    def score(item, text):
        numbers = re.findall(r"-?\d+", text or "")
        if not numbers:
            return 0.0
        return 100.0 if numbers[-1] == item["answer"] else 10.0


if __name__ == "__main__":
    RawPercentEnv.cli()
