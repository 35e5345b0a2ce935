"""HC709: evaluate() offers the resolved tools but passes the enabled TOOLSET names as valid_tool_names, so only
"terminal" (a toolset and a tool of the same name) runs in eval; read_file, write_file and the rest are answered
"Unknown tool" although the request offers them and training runs them."""

import time

from _good import LetterCountEnv

from environments.agent_loop import HermesAgentLoop
from environments.tool_context import ToolContext

EXPECTED_FINDINGS = ["HC709"]


class ToolsetNamesEvalEnv(LetterCountEnv):
    name = "eval-toolset-names"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config.model_copy(update={"enabled_toolsets": ["terminal", "file"]}), servers

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, _names = self._resolve_tools_for_group()
        correct = 0
        for item in self.eval_items:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=set(
                    self.config.enabled_toolsets
                ),  # the mistake: toolset names, not tool names
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
    ToolsetNamesEvalEnv.cli()
