"""Good: a reward that always inspects the rollout's own (possibly fresh) sandbox through ToolContext.

Regression guard for HC602: creating the sandbox on first use is the framework's doing, not the env's.
Otherwise the arithmetic example: the model works out an integer expression and answers.
"""

from __future__ import annotations

from environments.agent_loop import AgentResult
from environments.arithmetic_env import ArithmeticTerminalEnv
from environments.tool_context import ToolContext


class SandboxInspectingEnv(ArithmeticTerminalEnv):
    """Checks the sandbox is usable before scoring (a fresh sandbox is created by this very call)."""

    name = "sandbox-inspecting"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        listing = await ctx.aterminal("ls -la && pwd")
        if listing["exit_code"] != 0:
            return 0.0
        return await super().compute_reward(item, result, ctx)


if __name__ == "__main__":
    SandboxInspectingEnv.cli()
