"""HC405: evaluate() upper-cases each item's word in place for its sample log, after scoring it; the eval items are
shared, so the next evaluate() (and any rollout of the item) asks about 'LETTER' instead of 'letter'."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC405"]


class EditsItemEnv(LetterCountEnv):
    name = "eval-edits-item"

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        correct = 0
        samples = []
        for item in self.eval_items:
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
            item["word"] = item["word"].upper()  # the mistake: the shared item, edited for the log
            samples.append({"word": item["word"], "answer": item["answer"]})
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)},
            samples=samples,
            start_time=start,
            end_time=time.time(),
        )


if __name__ == "__main__":
    EditsItemEnv.cli()
