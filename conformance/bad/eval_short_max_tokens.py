"""HC712: a raw atroposlib env whose evaluate() samples with max_tokens=16 while training samples with 64, so a reply
training completes is cut off in eval and eval under-reports the trained policy."""

import time

from _good import RawSumEnv

EXPECTED_FINDINGS = ["HC712", "HC507"]  # HC507: RawSumEnv ignores finish_reason (a warning it inherits)


class ShortEvalRepliesEnv(RawSumEnv):
    name = "eval-short-max-tokens"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self.eval_items:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": self.prompt(item)}],
                n=1,
                temperature=0.0,
                max_tokens=16,  # the mistake: training uses 64
            )
            scores.append(self.score(item, completion.choices[0].message.content or ""))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    ShortEvalRepliesEnv.cli()
