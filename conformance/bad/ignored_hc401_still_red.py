"""HC402: the env ignores HC401, but a reward that raises on every call (dict access) is still red."""

from __future__ import annotations

from _arith import ArithBase, grade

EXPECTED_FINDINGS = ["HC402"]


class QuizEnv(ArithBase):
    name = "s-quiz"
    conformance_ignore = {"HC401": "we know"}

    async def compute_reward(self, item, result, ctx):
        return grade(item, result["messages"][-1]["content"])


if __name__ == "__main__":
    QuizEnv.cli()
