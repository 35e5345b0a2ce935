"""The answer is a FILE the agent writes: count the words of a text and write the count to ``answer.txt``; the
reward reads that file back from the rollout's own sandbox. The item's ``answer`` field is the count, so the kit
tries "Answer: 7" as a reply, which this task rightly scores 0.

Regression guard for HC407 (issue 29): every gold probe scoring 0 here said the kit's guess of the answer's form
was wrong, not that the reward is: a warning. The kit now writes the answer to the file the prompt names
(answer.txt) and proves the reward; tests/conformance/test_oracles.py keeps the warning for a prompt it cannot read.
"""

from __future__ import annotations

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig

TEXTS = [
    "the quick brown fox jumps over the lazy dog",
    "a stitch in time saves nine",
    "all that glitters is not gold",
    "actions speak louder than words",
    "where there is smoke there is fire",
    "the early bird catches the worm every single morning",
]


class ReportFileEnv(HermesAgentBaseEnv):
    name = "report-file"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file", "terminal"],
            max_agent_turns=5,
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
        rows = [{"text": t, "answer": len(t.split())} for t in TEXTS]
        self.test, self.train = rows[:2], rows[2:]
        self.pos = 0

    async def get_next_item(self):
        item = self.train[self.pos % len(self.train)]
        self.pos += 1
        return item

    def format_prompt(self, item):
        return (
            f'Count the words of this text: "{item["text"]}". Write only the count, as digits, to the file '
            "answer.txt in your working directory."
        )

    async def compute_reward(self, item, result, ctx):
        try:
            written = await ctx.aread_file("answer.txt")
        except OSError:
            return 0.0
        text = written.strip()
        return 1.0 if text.isdigit() and int(text) == item["answer"] else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/accuracy")


if __name__ == "__main__":
    ReportFileEnv.cli()
