"""HC604: every task writes and the reward reads /tmp/answer.txt, one file for all concurrent rollouts."""

from __future__ import annotations

import _good

EXPECTED_FINDINGS = ["HC604"]


class NotesEnv(_good.NotesEnv):
    def format_prompt(self, item):
        return f"Create the file /tmp/answer.txt containing exactly: {item['text']}"

    async def compute_reward(self, item, result, ctx):
        try:
            content = await ctx.aread_file("/tmp/answer.txt")
        except Exception:
            return 0.0
        return 1.0 if content.strip() == item["text"] else 0.0


if __name__ == "__main__":
    NotesEnv.cli()
