"""Derived from filetree_env.py.

Lay out a small project: the answer is the file tree the agent leaves in its sandbox, not anything it says.

Each item is a layout specification (paths and what each file must contain). After the rollout,
``compute_reward`` lists the files of the rollout's sandbox and gives each expected path partial credit: 0.4 for
existing at exactly that relative path, 0.6 times the share of its required snippets found in it. Files the spec
does not ask for cost a little (a tree full of junk is not a layout), and the total is clamped to [0, 1].
"""

from __future__ import annotations

import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "You set up project skeletons. Create exactly the files requested, at exactly the paths requested, "
    "relative to your working directory, using the file tools or the terminal. Say 'done' when finished."
)
W_EXISTS, W_CONTENT = 0.4, 0.6
EXTRA_FILE_PENALTY = 0.05


def _layout(pkg: str, version: str, funcs: list[str], extras: bool) -> dict:
    files = [
        {"path": f"{pkg}/__init__.py", "contains": [f'__version__ = "{version}"']},
        {"path": f"{pkg}/core.py", "contains": [f"def {f}(" for f in funcs]},
        {"path": "README.md", "contains": [f"# {pkg}"]},
        {"path": f"tests/test_{pkg}.py", "contains": [f"from {pkg}.core import"]},
    ]
    if extras:
        files.append({"path": "pyproject.toml", "contains": ["[project]", f'name = "{pkg}"']})
    lines = [f"- `{f['path']}` containing " + ", ".join(f"`{c}`" for c in f["contains"]) for f in files]
    return {
        "id": f"{pkg}-{version}",
        "package": pkg,
        "files": files,
        "request": "\n".join(lines),
    }


def _make_items() -> list[dict]:
    """Built-in layouts: package names x versions x function sets (deterministic)."""
    names = ["tides", "ledger", "quill", "orbit", "sprout", "harbor", "cinder", "mosaic", "ferry", "lumen"]
    funcs = [["load", "save"], ["parse"], ["fetch", "retry", "close"], ["render"], ["encode", "decode"]]
    items = []
    for i, pkg in enumerate(names):
        for j in range(3):
            items.append(_layout(pkg, f"0.{i}.{j}", funcs[(i + j) % len(funcs)], extras=(i + j) % 2 == 0))
    return items


class FileTreeEnv(HermesAgentBaseEnv):
    """The file tree left in the sandbox is the answer; the reward walks it."""

    name = "blind3-filetree"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["file", "terminal"],
            max_agent_turns=12,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            terminal_timeout=20,
            group_size=4,
            total_steps=150,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-filetree",
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
        # Split by package name, so no layout of an eval package is trained on under another version.
        eval_names = {"lumen", "ferry"}
        self._eval_items = [i for i in items if i["package"] in eval_names]
        self._items = [i for i in items if i["package"] not in eval_names]
        random.Random(21).shuffle(self._items)
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"Create this layout for the package `{item['package']}`:\n{item['request']}"

    @staticmethod
    async def _files(ctx: ToolContext) -> set[str]:
        listing = await ctx.aterminal("find . -type f -not -path '*/.*' | sort", timeout=20)
        return {line[2:] if line.startswith("./") else line for line in listing["output"].split("\n") if line}

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        present = await self._files(ctx)
        score = 0.0
        wanted = {f["path"] for f in item["files"]}
        for entry in item["files"]:
            path = entry["path"]
            if path not in present:
                continue
            text = await ctx.aread_file(path)
            found = sum(1 for needle in entry["contains"] if needle in text)
            score += W_EXISTS + W_CONTENT * found / len(entry["contains"])
        score /= len(item["files"])
        extras = [p for p in present if p not in wanted and "__pycache__" not in p]
        score -= EXTRA_FILE_PENALTY * len(extras)
        return max(0.0, min(1.0, round(score, 6)))

    def conformance_transcripts(self, item: dict) -> dict:
        """Known-good and known-bad model turns for this item (every file written at its path; a claim)."""
        writes = [
            {
                "name": "write_file",
                "arguments": {"path": f["path"], "content": "\n".join(f["contains"]) + "\n"},
            }
            for f in item["files"]
        ]
        good = [{"tool_calls": writes}, {"content": "done"}]
        bad = [{"content": "done"}]
        return {"good": [good], "bad": [bad]}

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
        samples = []
        for item in self._eval_items:
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": self.format_prompt(item)},
            ]
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=valid_names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(messages)
            ctx = ToolContext(item["id"])
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "score": score})
        n = max(1, len(scores))
        metrics = {
            "eval/layout_score": sum(scores) / n,
            "eval/exact_layouts": sum(s == 1.0 for s in scores) / n,
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
    FileTreeEnv.cli()
