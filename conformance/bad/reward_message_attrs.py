"""HC401: the messages of result.messages read as objects (m.role, m.content) inside a try/except: the
AttributeError is swallowed and the reward falls back to 0.0 for every rollout (mistakes #1/#2)."""

import re

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC401"]


class MessageAttrsEnv(LetterCountEnv):
    name = "reward-message-attrs"

    async def compute_reward(self, item, result, ctx) -> float:
        try:
            last = next(m.content for m in reversed(result.messages) if m.role == "assistant" and m.content)
        except (AttributeError, StopIteration):
            return 0.0
        numbers = re.findall(r"-?\d+", last)
        return 1.0 if numbers and numbers[-1] == item["answer"] else 0.0


if __name__ == "__main__":
    MessageAttrsEnv.cli()
