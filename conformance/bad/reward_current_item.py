"""HC413: the reward grades against the item get_next_item returned last (kept on self as "the current item")
instead of its ``item`` argument: once the trainer has fetched the next item, a right answer still in flight is
scored against another question."""

from _arith import ArithBase, grade, last_answer

EXPECTED_FINDINGS = ["HC407", "HC413"]


class CurrentItemEnv(ArithBase):
    name = "s-arith-current-item"

    async def get_next_item(self):
        self.current = await super().get_next_item()
        return self.current

    async def compute_reward(self, item, result, ctx):
        return grade(getattr(self, "current", item), last_answer(result))


if __name__ == "__main__":
    CurrentItemEnv.cli()
