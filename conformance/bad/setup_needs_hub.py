"""HC201: setup() loads the dataset from the Hub with no fallback, so it crashes offline (CI, air-gapped nodes)."""

import json
import urllib.request

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC201", "HC902"]


class HubOnlyEnv(LetterCountEnv):
    name = "setup-needs-hub"

    async def setup(self) -> None:
        url = "https://huggingface.co/datasets/example/letters/resolve/main/train.json"
        items = json.loads(urllib.request.urlopen(url, timeout=10).read())
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0


if __name__ == "__main__":
    HubOnlyEnv.cli()
