"""A web-research QA env: the model searches the (fake, offline) web and answers a question about a page.

Enables the ``web`` and ``terminal`` toolsets; under ``hermes-envs check`` and pytest the web tools search the
shipped corpus (hermes_envs/testing/assets/web), so the env is checked with no network. The reward credits the
right answer only (a citation alone earns nothing). Ships known-good and known-bad transcripts. Drive a `process`
run by hand with ``hermes-envs fake-server --script conformance/good/web_research.yaml --web-corpus``.
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import final_response
from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig

QUESTIONS = [
    {"question": "In which year was the Tern Island Lighthouse first lit?", "answer": "1874",
     "source": "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse", "query": "Tern Island Lighthouse"},
    {"question": "What was the population of Tern Island at the 2020 census?", "answer": "212",
     "source": "https://en.wikipedia.invalid/wiki/Tern_Island", "query": "Tern Island population"},
    {"question": "In which year was the Tern Island Lighthouse automated?", "answer": "1962",
     "source": "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse", "query": "Tern Island Lighthouse"},
    {"question": "How many minutes does the Port Halden ferry crossing take?", "answer": "55",
     "source": "https://ferry.porthalden.invalid/timetable", "query": "Port Halden ferry timetable"},
    {"question": "Until which year did Tobias Marlow keep the Tern Island light?", "answer": "1930",
     "source": "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse", "query": "Tern Island Lighthouse keepers"},
    {"question": "From how many nautical miles can the Tern Island light be seen?", "answer": "19",
     "source": "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse", "query": "Tern Island Lighthouse"},
]  # fmt: skip


def answered(text: str, answer: str) -> bool:
    """True when ``answer`` appears in ``text`` as a whole number (1874 in "lit in 1874.", not in "18745")."""
    return re.search(rf"(?<!\d){re.escape(answer)}(?!\d)", text) is not None


class WebResearchEnv(HermesAgentBaseEnv):
    """1.0 when the final answer holds the right number, else 0.0."""

    name = "web-research"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["web", "terminal"],
            max_agent_turns=6,
            group_size=4,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            system_prompt="Answer with the number you found, citing the page you read.",
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
        self.eval_items, self.train_items = QUESTIONS[:2], QUESTIONS[2:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Use web search to answer: {item['question']}"

    async def compute_reward(self, item: dict, result, ctx) -> float:
        return 1.0 if answered(final_response(result), item["answer"]) else 0.0

    def conformance_transcripts(self, item: dict) -> dict:
        """A rollout that searches, reads the source and answers; one that cites a page but answers wrong."""
        search = {"name": "web_search", "arguments": {"query": item["query"]}}
        extract = {"name": "web_extract", "arguments": {"urls": [item["source"]]}}
        wrong = str(int(item["answer"]) + 7)
        return {
            "good": [
                [
                    {"content": "", "tool_calls": [search]},
                    {"content": "", "tool_calls": [extract]},
                    {"content": f"It is {item['answer']}, according to {item['source']}."},
                ]
            ],
            "bad": [
                [
                    {"content": "", "tool_calls": [search]},
                    {"content": f"It is {wrong}, see {item['source']}."},
                ]
            ],
        }

    async def evaluate(self, *args, **kwargs) -> dict:
        start = time.time()
        tools = self._resolve_tools_for_group()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(
                self.initial_messages(item), task_id=task_id, temperature=0.0, tools=tools
            )
            scores.append(await self.score_rollout(item, result, task_id))
        metrics = {"eval/accuracy": sum(scores) / len(scores)}
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())
        return metrics


if __name__ == "__main__":
    WebResearchEnv.cli()
