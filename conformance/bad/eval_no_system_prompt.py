"""HC709: evaluate() sends only the user prompt; the system prompt every training rollout gets (it names the answer
format, "End with 'Answer: <number>'") is nowhere in eval, so eval measures the policy under a prompt it never
trained on."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC709"]


class NoSystemInEvalEnv(LetterCountEnv):
    name = "eval-no-system-prompt"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            messages = [
                {"role": "user", "content": self.format_prompt(item)}
            ]  # the mistake: no system prompt
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx) == 1.0
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    NoSystemInEvalEnv.cli()
