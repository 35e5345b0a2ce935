"""Judge with fallback: an LLM judge (through self.server, at temperature 0) grades the answer; when the judge
fails or says something unparseable, a normalised exact match decides. No tools.
"""

from __future__ import annotations

import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

QA = [
    ("What is the capital of France?", "Paris"),
    ("Which planet is known as the red planet?", "Mars"),
    ("What gas do plants absorb from the air?", "carbon dioxide"),
    ("Who wrote Hamlet?", "Shakespeare"),
    ("What is the largest ocean on Earth?", "Pacific"),
    ("Which metal is liquid at room temperature?", "mercury"),
    ("What is the hardest natural substance?", "diamond"),
    ("Which organ pumps blood?", "heart"),
    ("What is the chemical symbol for gold?", "Au"),
    ("What language has the most native speakers?", "Mandarin"),
]

JUDGE = (
    "Question: {question}\nReference answer: {answer}\nStudent answer: {response}\n"
    "Is the student answer correct? Reply with exactly 'VERDICT: CORRECT' or 'VERDICT: INCORRECT'."
)


def _final(result: AgentResult) -> str:
    for message in reversed(result.messages):
        if message.get("role") == "assistant" and message.get("content"):
            return message["content"]
    return ""


class JudgedQAEnv(HermesAgentBaseEnv):
    """Short-answer trivia graded by a judge model, with an exact-match fallback."""

    name = "judged-qa"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=2,
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
        items = [{"question": q, "answer": a} for q, a in QA]
        self.eval_items, self.train_items = items[:3], items[3:]
        self.index = 0

    async def get_next_item(self) -> dict:
        item = self.train_items[self.index % len(self.train_items)]
        self.index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["question"] + " Answer in a few words."

    async def _judge(self, item: dict, response: str) -> bool | None:
        prompt = JUDGE.format(question=item["question"], answer=item["answer"], response=response[:2000])
        try:
            completion = await self.server.chat_completion(
                messages=[{"role": "user", "content": prompt}], n=1, temperature=0.0, max_tokens=16
            )
            verdict = completion.choices[0].message.content or ""
        except Exception:
            return None
        match = re.search(r"VERDICT:\s*(CORRECT|INCORRECT)", verdict)
        return None if match is None else match.group(1) == "CORRECT"

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        response = _final(result)
        if not response.strip():
            return 0.0
        verdict = await self._judge(item, response)
        if verdict is None:  # fallback: the reference answer's words appear in the response
            reference = re.findall(r"[a-z0-9]+", item["answer"].lower())
            words = re.findall(r"[a-z0-9]+", response.lower())
            verdict = any(words[i : i + len(reference)] == reference for i in range(len(words)))
        return 1.0 if verdict else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for index, item in enumerate(self.eval_items):
            task_id = f"eval-{index}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        await self.evaluate_log(
            metrics={"eval/accuracy": sum(scores) / len(scores)}, start_time=start, end_time=time.time()
        )


if __name__ == "__main__":
    JudgedQAEnv.cli()
