"""A persona env written the way upstream's roleplay benchmark is: our own code, its usage.

The prompt names an absolute HOST path (a per-case workspace under a configurable root) where the model must write
its persona file; the reward reads that file back with ``ctx.terminal("cat ...")`` on the ``local`` backend and
scores it (file written, reply given), as upstream's env does.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig
from pydantic import Field

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext


class PersonaConfig(HermesAgentEnvConfig):
    workspace_root: str = Field(
        default="", description="Host root of the per-case workspaces (temp if empty)."
    )


class HostFilePersonaEnv(HermesAgentBaseEnv):
    name = "compat-host-file-persona"
    env_config_cls = PersonaConfig

    @classmethod
    def config_init(cls) -> tuple[PersonaConfig, list[APIServerConfig]]:
        config = PersonaConfig(
            enabled_toolsets=["terminal", "file"], terminal_backend="local", max_agent_turns=4, group_size=1,
            use_wandb=False, ensure_scores_are_not_same=False, steps_per_eval=1, total_steps=1,
        )  # fmt: skip
        return config, [APIServerConfig(model_name="fake", base_url="http://127.0.0.1:9/v1", api_key="x")]

    async def setup(self) -> None:
        root = Path(self.config.workspace_root or tempfile.mkdtemp(prefix="compat-persona-"))
        self.case = {"persona": "a terse lighthouse keeper", "soul_path": str(root / "keeper" / "SOUL.md")}
        self.scores: list[float] = []

    async def get_next_item(self) -> dict[str, Any]:
        return self.case

    def format_prompt(self, item: dict[str, Any]) -> str:
        return f"Write your persona ({item['persona']}) to `{item['soul_path']}`, then reply in character."

    async def compute_reward(self, item: dict[str, Any], result: AgentResult, ctx: ToolContext) -> float:
        soul = ctx.terminal(f"cat {item['soul_path']}")
        soul_text = soul.get("output", "").strip() if soul.get("exit_code") == 0 else ""
        reply = next((m["content"] for m in reversed(result.messages) if m["role"] == "assistant"), "")
        score = 0.5 * bool(soul_text) + 0.5 * bool(reply)
        self.scores.append(score)
        return score

    async def evaluate(self, *args: Any, **kwargs: Any) -> None:
        """Capture-only benchmark, as upstream's: nothing held out to evaluate."""
        await self.evaluate_log(metrics={"eval/cases": len(self.scores)}, start_time=0.0, end_time=0.0)
