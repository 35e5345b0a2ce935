"""HC711 (a warning): evaluate() scores a rotating window of three eval items per call to save time, so two points
of the eval curve measure different items."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC711"]


class RotatingEvalEnv(LetterCountEnv):
    name = "eval-rotating-window"

    async def setup(self) -> None:
        await super().setup()
        self.eval_round = 0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        window = [self.eval_items[(3 * self.eval_round + k) % len(self.eval_items)] for k in range(3)]
        self.eval_round += 1  # the mistake: the next eval scores other items
        correct = 0
        for item in window:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(self.initial_messages(item))
            ctx = ToolContext(loop.task_id)
            try:
                correct += await self.compute_reward(item, result, ctx) == 1.0
            finally:
                ctx.cleanup()
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(window)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    RotatingEvalEnv.cli()
