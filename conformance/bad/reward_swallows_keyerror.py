"""HC402: the reward reads a field the items lack and catches the KeyError itself, scoring 0.0 on every call."""

from __future__ import annotations

from _arith import ArithBase, grade, last_answer

EXPECTED_FINDINGS = ["HC402"]


class ArithEnv(ArithBase):
    async def compute_reward(self, item, result, ctx):
        try:
            return grade(item, last_answer(result)) if item["solution"] else 0.0
        except Exception:
            return 0.0


if __name__ == "__main__":
    ArithEnv.cli()
