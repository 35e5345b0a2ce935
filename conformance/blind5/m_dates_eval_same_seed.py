"""Calendar questions (days between two dates, the weekday of a date) with a format bonus on top of correctness.

Modelled on NousResearch/atropos environments/gsm8k_server.py (a tagged final answer, a small reward for the format
and the rest for the right answer, held-out test items with their own eval metrics, the item counter saved in the
env's checkpoint). The answer must be in exactly one ``<answer>...</answer>`` block of the final message: 0.1 for
that, 0.9 more when it is right. Anything else scores 0.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

FORMAT_BONUS, CORRECT = 0.1, 0.9
SEED = 1234
SYSTEM_PROMPT = (
    "You answer calendar questions. You may use the terminal to compute. End your final message with the answer in "
    "a single <answer></answer> block, e.g. <answer>12</answer> or <answer>Monday</answer>."
)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)


def _date(rng: random.Random, first_year: int, last_year: int) -> dt.date:
    start = dt.date(first_year, 1, 1).toordinal()
    return dt.date.fromordinal(rng.randint(start, dt.date(last_year, 12, 31).toordinal()))


def make_items(seed: int, n: int, first_year: int, last_year: int) -> list[dict]:
    """``n`` distinct questions with dates in [first_year, last_year]: half day counts, half weekdays."""
    rng = random.Random(seed)
    items, seen = [], set()
    while len(items) < n:
        if rng.random() < 0.5:
            a, b = sorted([_date(rng, first_year, last_year), _date(rng, first_year, last_year)])
            question = (
                f"How many days are there from {a.isoformat()} to {b.isoformat()}? (Count {b} but not {a}.)"
            )
            item = {"kind": "days", "question": question, "answer": str((b - a).days)}
        else:
            d = _date(rng, first_year, last_year)
            question = f"What day of the week is {d.strftime('%d %B %Y')}?"
            item = {"kind": "weekday", "question": question, "answer": d.strftime("%A")}
        if item["question"] not in seen:
            seen.add(item["question"])
            items.append(item)
    return items


def parse_answer(text: str) -> str | None:
    """The content of the only <answer> block of ``text``; None when there is none or more than one."""
    blocks = _ANSWER.findall(text or "")
    if len(blocks) != 1:
        return None
    return blocks[0].strip()


def is_right(item: dict, given: str) -> bool:
    if item["kind"] == "days":
        return given.replace(",", "").strip() == item["answer"]
    return given.strip().lower() == item["answer"].lower()


class DatesEnv(HermesAgentBaseEnv):
    """Calendar arithmetic with a format bonus; a held-out eval set of 60 questions."""

    name = "dates"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=500,
            steps_per_eval=100,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="dates",
        )
        servers = [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="NousResearch/Hermes-3-Llama-3.1-8B",
                server_type="openai",
                api_key="x",
                health_check=False,
            )
        ]
        return config, servers

    async def setup(self) -> None:
        self.train_items = make_items(SEED, 2000, 2000, 2019)
        random.Random(SEED).shuffle(self.train_items)  # a fixed order, so a resumed run continues it
        self.eval_items = make_items(SEED, 60, 2000, 2019)
        self.iter = 0
        self.percent_correct_buffer: list[float] = []
        self._eval_metrics: dict[str, float] = {}

    def save_checkpoint(self, step, data=None):
        data = dict(data or {})
        data["iter"] = self.iter
        super().save_checkpoint(step, data)

    async def get_next_item(self) -> dict:
        item = self.train_items[self.iter % len(self.train_items)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["question"]

    def score_answer(self, item: dict, final: str) -> float:
        given = parse_answer(final)
        if given is None:
            return 0.0
        return FORMAT_BONUS + (CORRECT if is_right(item, given) else 0.0)

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        final = next(
            (m.get("content") or "" for m in reversed(result.messages) if m["role"] == "assistant"), ""
        )
        score = self.score_answer(item, final)
        self.percent_correct_buffer.append(1.0 if score == FORMAT_BONUS + CORRECT else 0.0)
        return score

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        right = {"days": [], "weekday": []}
        formatted, samples = 0, []
        train_buffer = list(self.percent_correct_buffer)
        for item in self.eval_items:
            task_id = f"eval-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            score = await self.score_rollout(item, result, task_id)
            final = next(
                (m.get("content") or "" for m in reversed(result.messages) if m["role"] == "assistant"), ""
            )
            formatted += parse_answer(final) is not None
            right[item["kind"]].append(score == FORMAT_BONUS + CORRECT)
            samples.append(
                {"question": item["question"], "answer": item["answer"], "final": final, "score": score}
            )
        self.percent_correct_buffer = train_buffer  # train/percent_correct counts training rollouts only
        n = max(1, len(self.eval_items))
        all_right = right["days"] + right["weekday"]
        self._eval_metrics = {
            "eval/accuracy": sum(all_right) / n,
            "eval/format_rate": formatted / n,
            "eval/accuracy_days": sum(right["days"]) / max(1, len(right["days"])),
            "eval/accuracy_weekday": sum(right["weekday"]) / max(1, len(right["weekday"])),
        }
        await self.evaluate_log(
            metrics=self._eval_metrics,
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = {**(wandb_metrics or {}), **self._eval_metrics}
        self._eval_metrics = {}
        if self.percent_correct_buffer:
            wandb_metrics["train/percent_correct"] = sum(self.percent_correct_buffer) / len(
                self.percent_correct_buffer
            )
            self.percent_correct_buffer = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    DatesEnv.cli()
