"""HC703: evaluate() only appends its accuracy to ./eval_results.jsonl (its own file, relative to the working
directory) and never logs it. The kit runs evaluate() in a temporary working directory, so checking this env
leaves no file behind in the folder the check was run from."""

import json
import time
import uuid

from _good import LetterCountEnv

EXPECTED_FINDINGS = ["HC703"]


class OwnFileEvalEnv(LetterCountEnv):
    name = "eval-writes-own-file"

    async def evaluate(self, *args, **kwargs):
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            task_id = str(uuid.uuid4())
            messages = self.initial_messages(item)
            result = await self.run_agent(messages, task_id=task_id, temperature=0.0, tools=(tools, names))
            correct += await self.score_rollout(item, result, task_id) == 1.0
        with open("eval_results.jsonl", "a", encoding="utf-8") as out:
            out.write(
                json.dumps({"accuracy": correct / len(self.eval_items), "seconds": time.time() - start})
            )
            out.write("\n")


if __name__ == "__main__":
    OwnFileEvalEnv.cli()
