"""HC708: evaluate() catches a failed model call and counts the item as wrong, and logs only the accuracy: an
outage during eval reads as a policy that got worse (raw atroposlib BaseEnv; the correct twin raises)."""

import logging
import time

from _good import RawSumEnv

EXPECTED_FINDINGS = ["HC708", "HC507"]


class EvalErrorsAsWrongEnv(RawSumEnv):
    name = "eval-errors-scored-zero"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self.eval_items:
            try:
                completion = await self.server.chat_completion(
                    messages=[{"role": "user", "content": self.prompt(item)}],
                    n=1,
                    temperature=0.0,
                    max_tokens=64,
                )
                reply = completion.choices[0].message.content or ""
            except Exception:  # the mistake: swallowed, and scored below like a wrong answer
                logging.getLogger(__name__).debug("eval request failed", exc_info=True)
                reply = ""
            scores.append(self.score(item, reply))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    EvalErrorsAsWrongEnv.cli()
