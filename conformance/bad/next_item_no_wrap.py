"""HC203: get_next_item indexes without wrap-around and raises IndexError once the data runs out."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC203"]


class NoWrapEnv(LetterCountEnv):
    name = "next-item-no-wrap"

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index]
        self.index += 1
        return item


if __name__ == "__main__":
    NoWrapEnv.cli()
