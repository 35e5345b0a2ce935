"""HC408 as a warning only: the reward double-checks a right answer in the sandbox with the synchronous
``ctx.terminal`` (the contract's API, which blocks the event loop as upstream's does), and the check takes about a
second. Every other rollout waits meanwhile; ``await ctx.aterminal(...)`` would not block. Any other blocking of the
same length (time.sleep, a synchronous HTTP call) stays an error: see reward_blocks_loop.py."""

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC408"]  # a warning (tests/conformance/test_corpus.py pins the severity)


VERIFIED: dict[str, bool] = {}  # word -> the sandbox agrees with the item's answer (checked once per word)


class SyncToolContextRewardEnv(LetterCountEnv):
    name = "reward-sync-tool-context"

    async def compute_reward(self, item, result, ctx) -> float:
        score = await super().compute_reward(item, result, ctx)
        word, letter = item["word"], item["letter"]
        if score and word not in VERIFIED:  # the command stands for a slow hidden test suite
            run = ctx.terminal(f"sleep 1; printf %s {word} | tr -cd {letter} | wc -c", timeout=10)
            VERIFIED[word] = run["output"].strip() == item["answer"]
        return score if VERIFIED.get(word, True) else 0.0


if __name__ == "__main__":
    SyncToolContextRewardEnv.cli()
