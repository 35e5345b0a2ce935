"""The arithmetic env the arithmetic mutants share (one correct env, each mutant overrides only its mistake): the
good unit-conversion env (terminal toolset, upstream layout, an evaluate() through the agent loop with tools) asked
multiplications with exact numeric answers instead."""

from __future__ import annotations

import re

from _good import UnitsEnv, last_answer

DATA = [
    {"q": "What is 37 * 12?", "answer": "444"},
    {"q": "What is 41 * 29?", "answer": "1189"},
    {"q": "What is 53 * 47?", "answer": "2491"},
    {"q": "What is 88 * 19?", "answer": "1672"},
    {"q": "What is 64 * 33?", "answer": "2112"},
    {"q": "What is 72 * 18?", "answer": "1296"},
]


def grade(item, text):
    nums = re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)
    if not nums:
        return 0.0
    try:
        return 1.0 if float(nums[-1].replace(",", "")) == float(item["answer"]) else 0.0
    except ValueError:
        return 0.0


class ArithBase(UnitsEnv):
    name = "s-arith"

    async def setup(self):
        rows = list(DATA)
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    def format_prompt(self, item):
        return item["q"] + " End with the number."

    async def compute_reward(self, item, result, ctx):
        return grade(item, last_answer(result))


__all__ = ["DATA", "ArithBase", "grade", "last_answer"]
