"""HC202: evaluate() sends the training items (wrapped in its own text) to /v1/completions; the overlap is found
inside the plain-text prompts too (HC701 then skips: it needs HC202)."""

import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC202"]


class CompletionOnTrainEnv(LetterCountEnv):
    name = "eval-completion-on-train"

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        answered = 0
        for item in self.train_items[:4]:
            out = await self.server.completion(
                prompt="Question: " + self.format_prompt(item) + "\nAnswer:",
                n=1,
                temperature=0.0,
                max_tokens=32,
            )
            answered += bool((out.choices[0].text or "").strip())
        await self.evaluate_log(
            metrics={"eval/answered": answered / 4}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    CompletionOnTrainEnv.cli()
