"""HC603: evaluate() creates a ToolContext per item and never calls ctx.cleanup(): every eval rollout's sandbox
(files, shell) stays behind for the rest of the run."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC603"]


class LeakyEvalEnv(LetterCountEnv):
    name = "eval-leaks-sandboxes"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            loop = HermesAgentLoop(
                self.server, tools, names, max_turns=self.config.max_agent_turns, temperature=0.0
            )
            result = await loop.run(self.initial_messages(item))
            ctx = ToolContext(loop.task_id)
            correct += await self.compute_reward(item, result, ctx) == 1.0  # no ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    LeakyEvalEnv.cli()
