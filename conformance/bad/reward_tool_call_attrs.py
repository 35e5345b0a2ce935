"""HC401: tool calls in result.messages read as objects (tc.function.name) inside a try/except that falls back to
a lower score: the AttributeError is swallowed, so the tool-use bonus silently never applies (mistake #2)."""

import re

from _good import LetterCountEnv, final_answer

EXPECTED_FINDINGS = ["HC401"]


class ToolCallAttrsEnv(LetterCountEnv):
    name = "reward-tool-call-attrs"

    async def compute_reward(self, item, result, ctx) -> float:
        numbers = re.findall(r"-?\d+", final_answer(result))
        score = 0.8 if numbers and numbers[-1] == item["answer"] else 0.0
        try:
            used = [tc.function.name for m in result.messages for tc in m.get("tool_calls") or []]
        except AttributeError:
            used = []
        return score + (0.2 if used and score else 0.0)


if __name__ == "__main__":
    ToolCallAttrsEnv.cli()
