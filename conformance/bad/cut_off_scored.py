"""HC507: a raw env's training scores a completion cut off by max_tokens (finish_reason "length") like a finished
one, while its own evaluate() counts cut-off completions as failures: training pays what its eval calls a failure."""

from __future__ import annotations

import time

from _good import RawSumEnv

EXPECTED_FINDINGS = ["HC507"]


class CutOffScoredEnv(RawSumEnv):
    name = "cut-off-scored"

    async def setup(self) -> None:
        await super().setup()
        # held-out sums the training answers also reach (24 = 17 + 7 in training)
        self.eval_items = [{"a": 20, "b": 4, "answer": "24"}, {"a": 5, "b": 19, "answer": "24"}]

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores, cut = [], 0
        for item in self.eval_items:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": self.prompt(item)}], n=1, temperature=0.0, max_tokens=64
            )
            choice = completion.choices[0]
            if choice.finish_reason == "length":
                cut += 1
                scores.append(0.0)
            else:
                scores.append(self.score(item, choice.message.content or ""))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores), "eval/cut_off": cut / len(scores)},
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    CutOffScoredEnv.cli()
