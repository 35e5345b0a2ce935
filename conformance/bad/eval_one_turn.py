"""HC712: evaluate() runs the agent loop with max_turns=1 ("eval should be cheap"), so an eval rollout ends right
after the model's first tool calls, before their results come back: a task training solves with tools cannot be
solved in eval."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC712", "HC701"]


class OneTurnEvalEnv(LetterCountEnv):
    name = "eval-one-turn"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=1,  # the mistake: training allows config.max_agent_turns
                temperature=0.0,
            )
            result = await loop.run(self.initial_messages(item))
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx) == 1.0
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    OneTurnEvalEnv.cli()
