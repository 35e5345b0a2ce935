"""HC202: the eval set is "held out" by numbering: every eval question is a training question under a new problem
number (``Problem 101:`` instead of ``Problem 7:``), so eval scores measure memorisation. Identical-prompt checks
miss it; the problem text is the same."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC202"]


class RenumberedEvalEnv(LetterCountEnv):
    name = "eval-renumbered"

    async def setup(self) -> None:
        await super().setup()
        for number, item in enumerate(self.train_items, 1):
            item["number"] = number
        # "New" eval problems: the first training items again, numbered from 101.
        self.eval_items = [dict(item, number=100 + i) for i, item in enumerate(self.train_items[:4], 1)]

    def format_prompt(self, item: dict) -> str:
        return f"Problem {item['number']}: " + super().format_prompt(item)


if __name__ == "__main__":
    RenumberedEvalEnv.cli()
