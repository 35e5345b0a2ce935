"""HC206: the items get an id from a seeded order, but one part of each (the word's padding letter) is drawn from the
global random module, so the item with the same id is a different question in every process: the data is not
reproducible and two runs evaluate different items under the same ids."""

import random

from _good import LetterCountEnv, make_items

EXPECTED_FINDINGS = ["HC206"]


class UnseededContentEnv(LetterCountEnv):
    name = "items-unseeded-content"

    async def setup(self) -> None:
        items = []
        for index, item in enumerate(make_items()):
            pad = random.choice("xyzq") * random.randint(
                1, 3
            )  # the mistake: the global random, not a seeded one
            word = item["word"] + pad
            items.append(
                {
                    "id": f"w{index}",
                    "word": word,
                    "letter": item["letter"],
                    "answer": str(word.count(item["letter"])),
                }
            )
        self.eval_items, self.train_items = items[:4], items[4:]
        self.index = 0


if __name__ == "__main__":
    UnseededContentEnv.cli()
