"""A file task verified through ToolContext: create a file with the given content; the reward reads it back from
the rollout's own sandbox. Ships its own good and bad example transcripts (``conformance_transcripts``).
"""

from __future__ import annotations

import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

NOTES = [
    ("notes/todo.txt", "buy oat milk"),
    ("src/version.txt", "1.4.2"),
    ("data/greeting.txt", "hello, world"),
    ("docs/owner.txt", "team-parsers"),
    ("cfg/mode.txt", "strict"),
    ("a/b/c.txt", "nested ok"),
    ("readme.txt", "read me first"),
    ("tmp/x.txt", "scratch"),
    ("log/level.txt", "debug"),
    ("env/name.txt", "files-v1"),
]


class FileWriteEnv(HermesAgentBaseEnv):
    """1.0 when the file exists in the rollout's sandbox with exactly the requested content."""

    name = "file-write"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file"],
            max_agent_turns=4,
            agent_temperature=1.0,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="hermes",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self) -> None:
        items = [{"path": path, "content": content} for path, content in NOTES]
        self.eval_items, self.train_items = items[:3], items[3:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Create the file {item['path']} containing exactly this text: {item['content']}"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        try:
            written = await ctx.aread_file(item["path"])
        except (FileNotFoundError, IsADirectoryError, OSError):
            return 0.0
        return 1.0 if written.strip() == item["content"] else 0.0

    def conformance_transcripts(self, item: dict) -> dict:
        """Known-good and known-bad rollouts for the conformance kit (scripts of model turns)."""
        write = {"name": "write_file", "arguments": {"path": item["path"], "content": item["content"]}}
        wrong = {"name": "write_file", "arguments": {"path": item["path"], "content": "something else"}}
        return {
            "good": [[{"content": "", "tool_calls": [write]}, {"content": "Done."}]],
            "bad": [[{"content": "", "tool_calls": [wrong]}, {"content": "Done."}]],
        }

    async def evaluate(self, *args, **kwargs) -> dict:
        start = time.time()
        tools = self._resolve_tools_for_group()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            messages = self.initial_messages(item)
            result = await self.run_agent(messages, task_id=task_id, temperature=0.0, tools=tools)
            scores.append(await self.score_rollout(item, result, task_id))
        metrics = {"eval/solved": sum(scores) / len(scores)}
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())
        return metrics


if __name__ == "__main__":
    FileWriteEnv.cli()
