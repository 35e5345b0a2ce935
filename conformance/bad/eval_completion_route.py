"""HC701: evaluate() asks /v1/completions (self.server.completion) once per item: plain text, no tools, one turn.
Before, those requests were not counted and HC202 wrongly said evaluate() made no model request at all."""

import re
import time

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC701"]


class CompletionEvalEnv(LetterCountEnv):
    name = "eval-completion-route"

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        correct = 0
        for item in self.eval_items:
            out = await self.server.completion(
                prompt=self.format_prompt(item) + "\nAnswer:", n=1, temperature=0.0, max_tokens=32
            )
            numbers = re.findall(r"-?\d+", out.choices[0].text or "")
            correct += bool(numbers) and numbers[-1] == item["answer"]
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    CompletionEvalEnv.cli()
