"""HC413: the reward asks for the number in <answer> tags and credits the reply when ANY of its tags holds the
right number. A reply listing several candidates, each in its own tag, scores like the right answer alone, so the
policy learns to hedge instead of committing to one answer."""

import re

from _arith import ArithBase, last_answer

EXPECTED_FINDINGS = ["HC413"]


def tagged_numbers(text):
    return [t.strip().strip("*").replace(",", "") for t in re.findall(r"<answer>(.*?)</answer>", text, re.S)]


class AnyAnswerTagEnv(ArithBase):
    name = "any-answer-tag"

    def format_prompt(self, item):
        return item["q"] + " Give the number in <answer></answer> tags."

    async def compute_reward(self, item, result, ctx):
        given = tagged_numbers(last_answer(result))
        return 1.0 if any(g == item["answer"] for g in given) else 0.0


if __name__ == "__main__":
    AnyAnswerTagEnv.cli()
