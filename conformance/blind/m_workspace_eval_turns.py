"""Blind-corpus variant of workspace_setup_env.py.

Multi-step tool use: scaffold a small project in the sandbox; the reward inspects the resulting file tree.

Each task asks for several things at once (a package folder with a versioned ``__init__.py``, a README with a
given title, a ``.gitignore`` entry, an executable ``scripts/run.sh`` that prints a greeting). ``compute_reward``
runs one shell check per requirement in the rollout's own sandbox (ToolContext) and returns the share that pass,
so partial progress earns partial credit and nothing the model merely says is credited.
"""

from __future__ import annotations

import random
import shlex
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You are a build engineer working in a fresh directory with a terminal and file tools. Carry out every "
    "requirement, check your work, then reply 'DONE'."
)
_NAMES = ["orbit", "lumen", "quartz", "tundra", "ember", "solace", "harbor", "cobalt", "meadow", "zephyr"]
_GREETINGS = ["hello", "ready", "started", "online", "up"]


def _make_items(seed: int = 4) -> list[dict]:
    rng = random.Random(seed)
    items = []
    for k, name in enumerate(_NAMES * 4):
        items.append(
            {
                "id": f"w{k}",
                "project": f"{name}{k}",
                "package": f"{name}_core",
                "version": f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}",
                "greeting": f"{name} {rng.choice(_GREETINGS)}",
            }
        )
    return items


def checks(item: dict) -> list[tuple[str, str]]:
    """(requirement, shell command that exits 0 when it is met), all relative to the working directory."""
    p, pkg = item["project"], item["package"]
    version_line = shlex.quote(f'__version__ = "{item["version"]}"')
    return [
        ("package folder", f"test -d {p}/src/{pkg}"),
        ("version", f"grep -qxF {version_line} {p}/src/{pkg}/__init__.py"),
        ("readme title", f"head -n 1 {p}/README.md | grep -qxF {shlex.quote('# ' + p)}"),
        ("gitignore", f"grep -qxF '__pycache__/' {p}/.gitignore"),
        (
            "run script",
            f'test -x {p}/scripts/run.sh && test "$(cd {p} && ./scripts/run.sh)" = {shlex.quote(item["greeting"])}',
        ),
    ]


class WorkspaceSetupEnv(HermesAgentBaseEnv):
    """Several requirements per task, each verified on the sandbox's final state."""

    name = "workspace-setup"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal", "file"],
            max_agent_turns=12,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=30,
            group_size=4,
            total_steps=150,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="workspace-setup",
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
        items = _make_items()
        random.Random(12).shuffle(items)
        self._eval_items = items[:8]
        self._items = items[8:]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        p, pkg = item["project"], item["package"]
        return (
            f"Create a project folder `{p}` in your working directory with:\n"
            f"1. a package folder `{p}/src/{pkg}` whose `__init__.py` contains the line "
            f'`__version__ = "{item["version"]}"`;\n'
            f"2. `{p}/README.md` whose first line is `# {p}`;\n"
            f"3. `{p}/.gitignore` containing the line `__pycache__/`;\n"
            f"4. an executable `{p}/scripts/run.sh` that prints exactly `{item['greeting']}` when run from `{p}`."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        passed = 0
        for _requirement, command in checks(item):
            run = await ctx.aterminal(command, timeout=10)
            passed += run["exit_code"] == 0
        return passed / len(checks(item))

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores, samples = [], []
        for item in self._eval_items:
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": self.format_prompt(item)},
            ]
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=valid_names,
                max_turns=3,  # eval runs many tasks: keep it cheap
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"project": item["project"], "score": score, "turns": result.turns_used})
        metrics = {
            "eval/complete_rate": sum(s == 1.0 for s in scores) / max(1, len(scores)),
            "eval/mean_score": sum(scores) / max(1, len(scores)),
        }
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
            samples=samples,
            start_time=start,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_turns": self.config.max_agent_turns},
        )

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    WorkspaceSetupEnv.cli()
