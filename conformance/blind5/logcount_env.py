"""Count HTTP status codes in an access log: the agent writes ``status_counts.json``; the reward reads that file.

Modelled on NousResearch/hermes-agent environments/terminal_test_env/terminal_test_env.py (the agent creates a file,
the verifier reads it back from the rollout's own sandbox). Here the file is JSON and the reward gives partial
credit per status code, so a model that counts most lines right still gets a signal.
"""

from __future__ import annotations

import json
import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import AgentResult, HermesAgentBaseEnv, HermesAgentEnvConfig, ToolContext

OUTPUT_FILE = "status_counts.json"
SYSTEM_PROMPT = (
    "You are a careful operations engineer with a terminal and file tools in a private working directory. "
    "Do the task with the tools, save the requested file, then say in one sentence what you saved."
)
_PATHS = ["/", "/login", "/api/items", "/api/cart", "/static/app.js", "/health", "/search?q=x"]
_STATUSES = [200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 404, 500, 502, 503]


def make_log(rng: random.Random, n_lines: int) -> tuple[list[str], dict[str, int]]:
    """An access log of ``n_lines`` lines and its status-code counts (codes as strings, as JSON keys are)."""
    lines, counts = [], {}
    for i in range(n_lines):
        status = rng.choice(_STATUSES)
        ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 254)}"
        size = rng.randint(120, 9000)
        lines.append(
            f'{ip} - - [03/Dec/2026:09:{i % 60:02d}:00 +0000] "GET {rng.choice(_PATHS)} HTTP/1.1" {status} {size}'
        )
        counts[str(status)] = counts.get(str(status), 0) + 1
    return lines, counts


def make_items(seed: int, n: int, prefix: str) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for k in range(n):
        lines, counts = make_log(rng, rng.randint(8, 20))
        items.append({"id": f"{prefix}-{k}", "log": "\n".join(lines), "counts": counts})
    return items


def score_counts(expected: dict[str, int], got: object) -> float:
    """Share of the expected codes counted right, less a share per code that is not in the log; 1.0 when exact."""
    if not isinstance(got, dict):
        return 0.0
    got = {str(k): v for k, v in got.items()}
    right = sum(
        1 for code, n in expected.items() if got.get(code) == n and not isinstance(got.get(code), bool)
    )
    extra = sum(1 for code in got if code not in expected)
    return max(0.0, (right - extra) / len(expected))


class LogCountEnv(HermesAgentBaseEnv):
    """Status-code counting verified by reading the file the agent left in its sandbox."""

    name = "logcount"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=8,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="logcount",
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
        # Train and eval logs come from different seeds, so no eval log is ever a training log.
        self.train_items = make_items(seed=101, n=400, prefix="train")
        self.eval_items = make_items(seed=202, n=40, prefix="eval")
        self.iter = 0
        self._eval_metrics: dict[str, float] = {}

    async def get_next_item(self) -> dict:
        item = self.train_items[self.iter % len(self.train_items)]
        self.iter += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            "Here is an access log:\n\n```\n" + item["log"] + "\n```\n\n"
            f"Count the requests per HTTP status code and save the counts as a JSON object in `{OUTPUT_FILE}` in "
            'your working directory, with the status codes as string keys, e.g. {"200": 41, "418": 2}.'
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        # The verdict comes from the file the rollout left behind, not from what the model says it did.
        try:
            got = json.loads(await ctx.aread_file(OUTPUT_FILE))
        except (OSError, ValueError):  # missing, unreadable, too large or not JSON: the work is not there
            return 0.0
        return score_counts(item["counts"], got)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        exact, total, samples = 0, 0.0, []
        for item in self.eval_items:
            task_id = f"eval-{item['id']}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            score = await self.score_rollout(item, result, task_id)
            exact += score == 1.0
            total += score
            samples.append({"id": item["id"], "score": score, "turns": result.turns_used})
        n = max(1, len(self.eval_items))
        self._eval_metrics = {"eval/exact_rate": exact / n, "eval/mean_score": total / n}
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
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    LogCountEnv.cli()
