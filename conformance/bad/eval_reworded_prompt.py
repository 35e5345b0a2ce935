"""HC709: evaluate() writes its own terse question for each item ("Count e in letter.") instead of calling
format_prompt: the item evaluate() scores is asked differently from the way a training rollout of that same item is
asked, so eval measures another task."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC709"]


class RewordedEvalEnv(LetterCountEnv):
    name = "eval-reworded-prompt"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            messages = self.initial_messages(item)
            messages[-1] = {
                "role": "user",
                "content": f"Count {item['letter']} in {item['word']}.",
            }  # the mistake
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
    RewordedEvalEnv.cli()
