"""HC411: the reward reads result.messages[-1], so a tool result holding the answer (the agent ran out of turns) is graded as the model's answer."""

from __future__ import annotations

from _arith import ArithBase, grade

EXPECTED_FINDINGS = ["HC411"]


class ArithEnv(ArithBase):
    async def compute_reward(self, item, result, ctx):
        return grade(item, result.messages[-1].get("content") or "")


if __name__ == "__main__":
    ArithEnv.cli()
