"""HC709: evaluate() filters the tools through a stale allow-list written before training gained the file tools,
so the policy is evaluated without tools it was trained to use."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC709"]

#: The mistake: the tools eval allows, written when the env had only the terminal.
EVAL_TOOLS = {"terminal"}


class StaleEvalToolsEnv(LetterCountEnv):
    name = "eval-stale-tools"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config.model_copy(update={"enabled_toolsets": ["terminal", "file"]}), servers

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, names = self._resolve_tools_for_group()
        tools = [t for t in tools if t["function"]["name"] in EVAL_TOOLS]
        names = set(names) & EVAL_TOOLS
        correct = 0
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
        await self.evaluate_log(
            metrics={"eval/accuracy": correct / len(self.eval_items)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    StaleEvalToolsEnv.cli()
