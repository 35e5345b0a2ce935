"""An upstream-style base class with the same contract as HermesAgentBaseEnv, written independently (as another
framework would): it proves the kit tests the contract, not our base's internals. Not an environment itself.

Like upstream, a reward that raises becomes a silent 0.0 here; the conformance kit still reports it (HC402).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from atroposlib.envs.base import BaseEnv, ScoredDataGroup, ScoredDataItem

from environments.agent_loop import HermesAgentLoop
from environments.hermes_base_env import HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.env import tokenize_transcript
from hermes_envs.tools import registry


class UpstreamAgentBaseEnv(BaseEnv):
    """Agent rollouts: system prompt + format_prompt, HermesAgentLoop, compute_reward with a ToolContext."""

    name: str | None = None
    env_config_cls = HermesAgentEnvConfig

    def _resolve_tools_for_group(self) -> tuple[list[dict], set[str]]:
        return registry.resolve(self.config.enabled_toolsets, self.config.disabled_toolsets)

    def format_prompt(self, item: Any) -> str:
        raise NotImplementedError

    async def compute_reward(self, item: Any, result: Any, ctx: ToolContext) -> float:
        raise NotImplementedError

    async def collect_trajectory(self, item: Any) -> tuple[ScoredDataItem | None, list]:
        task_id = str(uuid.uuid4())
        tools, names = self._resolve_tools_for_group()
        messages = []
        if self.config.system_prompt:
            messages.append({"role": "system", "content": self.config.system_prompt})
        messages.append({"role": "user", "content": self.format_prompt(item)})
        loop = HermesAgentLoop(
            server=self.server,
            tool_schemas=tools,
            valid_tool_names=names,
            max_turns=self.config.max_agent_turns,
            task_id=task_id,
            temperature=self.config.agent_temperature,
        )
        result = await loop.run(messages)
        score = 0.0
        if result.turns_used and any(m.get("role") == "assistant" for m in result.messages):
            ctx = ToolContext(task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            except Exception:
                score = 0.0
            finally:
                ctx.cleanup()
        tokens, masks = tokenize_transcript(self.tokenizer, result.messages, tools or None)
        return ScoredDataItem(
            tokens=tokens,
            masks=masks,
            scores=score,
            messages=result.messages,
            advantages=None,
            ref_logprobs=None,
            group_overrides=None,
            overrides=None,
            images=None,
        ), []

    async def collect_trajectories(self, item: Any) -> tuple[ScoredDataGroup | None, list]:
        results = await asyncio.gather(
            *(self.collect_trajectory(item) for _ in range(self.config.group_size))
        )
        group = ScoredDataGroup(
            tokens=[], masks=[], scores=[], messages=[], advantages=None, ref_logprobs=None
        )
        for scored, _ in results:
            for key in ("tokens", "masks", "scores", "messages"):
                group[key].append(scored[key])
        return group, []
