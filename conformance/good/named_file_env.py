"""A file task whose fields are not the tool's parameter names (filename/text): the kit derives the write."""

from __future__ import annotations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig

DATA = [
    {"filename": "notes/todo.txt", "text": "buy milk"},
    {"filename": "notes/plan.txt", "text": "ship v2 friday"},
    {"filename": "notes/idea.txt", "text": "solar kettle"},
    {"filename": "notes/memo.txt", "text": "call the bank"},
    {"filename": "notes/list.txt", "text": "eggs, flour"},
    {"filename": "notes/goal.txt", "text": "run 5 km"},
]


def last_answer(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class NotesEnv(HermesAgentBaseEnv):
    name = "s-notes"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file"],
            max_agent_turns=4,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [
            APIServerConfig(
                base_url="http://localhost:9001/v1",
                model_name="m",
                api_key="x",
                server_type="openai",
                health_check=False,
            )
        ]

    async def setup(self):
        rows = list(DATA)
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return f"Create the file {item['filename']} containing exactly: {item['text']}"

    async def compute_reward(self, item, result, ctx):
        try:
            content = await ctx.aread_file(item["filename"])
        except Exception:
            return 0.0
        return 1.0 if content.strip() == item["text"] else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/score")


if __name__ == "__main__":
    NotesEnv.cli()
