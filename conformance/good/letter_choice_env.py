"""Multiple choice, answered with one letter ("Answer: C", bold or not); no tools.

Regression guard for HC410: a one-letter gold also occurs in the answer shape's own words ("Answer: A"), so the
kit must write the gold where the shape puts it, not at its first occurrence ("**A**nswer: A").
"""

from __future__ import annotations

import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig

QUESTIONS = [
    {
        "question": "Which planet is largest?",
        "options": ["Mars", "Jupiter", "Venus", "Mercury"],
        "answer": "B",
    },
    {"question": "What is 7 * 8?", "options": ["56", "54", "64", "48"], "answer": "A"},
    {"question": "Which number is prime?", "options": ["21", "27", "33", "29"], "answer": "D"},
    {
        "question": "Which ocean is largest?",
        "options": ["Atlantic", "Indian", "Pacific", "Arctic"],
        "answer": "C",
    },
    {"question": "How many sides has a hexagon?", "options": ["5", "8", "7", "6"], "answer": "D"},
    {"question": "Water boils at sea level at (C)?", "options": ["90", "100", "110", "120"], "answer": "B"},
]

#: "Answer: C", "answer: (c)", "Answer: **C**"; the markup may wrap the letter only.
LETTER = re.compile(r"answer\s*(?:is)?\s*[:=]?\s*[*_`(]*([ABCD])[*_`)]*(?![A-Za-z])", re.I)


def final_text(result: AgentResult) -> str:
    for m in reversed(result.messages):
        if m.get("role") == "assistant" and m.get("content"):
            return m["content"]
    return ""


class LetterChoiceEnv(HermesAgentBaseEnv):
    name = "good-letter-choice"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=1,
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
        self.train, self.held_out = QUESTIONS[:-2], QUESTIONS[-2:]
        self.k = 0

    async def get_next_item(self):
        item = self.train[self.k % len(self.train)]
        self.k += 1
        return item

    def format_prompt(self, item):
        options = "\n".join(f"{'ABCD'[i]}) {text}" for i, text in enumerate(item["options"]))
        return f"{item['question']}\n{options}\nFinish with 'Answer: <letter>'."

    async def compute_reward(self, item, result, ctx):
        found = LETTER.findall(final_text(result))
        return 1.0 if found and found[-1].upper() == item["answer"] else 0.0

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.held_out, "eval/accuracy")


if __name__ == "__main__":
    LetterChoiceEnv.cli()
