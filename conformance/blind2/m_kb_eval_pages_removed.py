"""Derived from station_kb_env.py (blind2 corpus).

Retrieval over a built-in knowledge base: answer questions about fictional research stations, citing the page.

The facts are invented (generated from a fixed seed), so the model cannot know them and must search: ``kb_search``
ranks pages by word overlap with the query, ``kb_read`` returns one page. The answer line is
'Answer: <text> [doc-id]'; the reward gives 0.8 for the right answer (normalized comparison) and 0.2 for citing the
page that holds it. Train and eval ask about different stations.
"""

from __future__ import annotations

import json
import random
import re
import string
import time
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You answer questions from the station knowledge base. Search it with kb_search, read pages with kb_read, then "
    "finish with one line 'Answer: <answer> [<doc-id>]' citing the page you used."
)
W_ANSWER, W_CITATION = 0.8, 0.2

_NAMES = [
    "Aurora",
    "Borealis",
    "Cobalt",
    "Driftwood",
    "Ember",
    "Fjord",
    "Glacier",
    "Halcyon",
    "Ironbark",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Obsidian",
    "Pinnacle",
    "Quarry",
    "Rimefrost",
    "Solstice",
    "Tundra",
    "Umbra",
    "Vantage",
    "Willow",
    "Zephyr",
]
_LEADS = [
    "Ada Okafor",
    "Bram Visser",
    "Chen Lu",
    "Dana Whitlock",
    "Emil Sørensen",
    "Farah Nadeem",
    "Goran Petrov",
    "Hana Sato",
    "Ines Duarte",
    "Jonah Reyes",
    "Kaia Lindqvist",
    "Luis Ortega",
]
_FOCUS = [
    "ice-core drilling",
    "seismology",
    "auroral physics",
    "marine biology",
    "glaciology",
    "meteorology",
    "lichen ecology",
    "radio astronomy",
]


def _build_pages(seed: int = 1701) -> list[dict]:
    rng = random.Random(seed)
    pages = []
    for i, name in enumerate(_NAMES):
        facts = {
            "founded": str(rng.randint(1951, 2015)),
            "lead": rng.choice(_LEADS),
            "focus": rng.choice(_FOCUS),
            "altitude": str(rng.randint(40, 3900)),
            "crew": str(rng.randint(6, 80)),
        }
        text = (
            f"{name} Station was founded in {facts['founded']}. Its research focuses on {facts['focus']}. "
            f"The station lead is {facts['lead']}. It sits at an altitude of {facts['altitude']} metres and "
            f"houses a winter crew of {facts['crew']}."
        )
        pages.append(
            {
                "id": f"doc-{i + 1:02d}",
                "title": f"{name} Station",
                "station": name,
                "text": text,
                "facts": facts,
            }
        )
    return pages


PAGES = _build_pages()
KB: dict[str, dict] = {p["id"]: p for p in PAGES}
_QUESTIONS = {
    "founded": "In what year was {s} Station founded?",
    "lead": "Who leads {s} Station?",
    "focus": "What is the research focus of {s} Station?",
    "altitude": "At what altitude, in metres, is {s} Station?",
    "crew": "How many people are in the winter crew of {s} Station?",
}


def kb_search(query: str) -> str:
    """Search the station knowledge base; returns the best matching pages (id, title, first sentence).

    Args:
        query: Words to look for.
    """
    words = set(re.findall(r"\w+", query.lower()))
    ranked = sorted(KB.values(), key=lambda p: -len(words & set(re.findall(r"\w+", p["text"].lower()))))
    return json.dumps(
        [{"id": p["id"], "title": p["title"], "snippet": p["text"].split(". ")[0]} for p in ranked[:3]]
    )


def kb_read(doc_id: str) -> str:
    """Read one page of the knowledge base.

    Args:
        doc_id: The page id from kb_search, e.g. doc-07.
    """
    page = KB.get(doc_id)
    if page is None:
        return json.dumps({"error": f"no page {doc_id!r}"})
    return json.dumps({"id": page["id"], "title": page["title"], "text": page["text"]})


def _register(fn: Any, toolset: str) -> None:
    """Register ``fn`` on the default registry, replacing a tool of that name left by an earlier import."""
    try:
        registry.unregister(fn.__name__)
    except KeyError:
        pass
    registry.tool(fn, toolset=toolset)


def _register_tools() -> None:
    """This file's tools on the default registry (again at setup, so a sibling env imported later cannot shadow
    them while this env runs)."""
    _register(kb_search, "station_kb")
    _register(kb_read, "station_kb")


_register_tools()


def _make_items() -> list[dict]:
    """Built-in dataset: five questions per station, with the answer and the page that holds it."""
    return [
        {
            "question": q.format(s=p["station"]),
            "station": p["station"],
            "answer": p["facts"][key],
            "doc": p["id"],
        }
        for p in PAGES
        for key, q in _QUESTIONS.items()
    ]


def _normalize(text: str) -> str:
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    text = re.sub(r"\b(the|a|an|metres|meters|m|people|station)\b", " ", text)
    return " ".join(text.split())


def score_answer(text: str, item: dict) -> float:
    """Answer credit for the right normalized answer, citation credit for the page that holds it."""
    lines = re.findall(r"Answer:\s*(.*?)\s*(?:\[(doc-\d+)\])?\s*$", text, re.MULTILINE)
    if not lines:
        return 0.0
    answer, cited = lines[-1]
    score = W_ANSWER if _normalize(answer) == _normalize(item["answer"]) else 0.0
    if score and cited == item["doc"]:
        score += W_CITATION
    return round(score, 6)


class StationKBEnv(HermesAgentBaseEnv):
    """Search-and-read QA over an invented corpus; answer and citation both count."""

    name = "station-kb"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["station_kb"],
            max_agent_turns=6,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="station-kb",
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
        _register_tools()
        items = _make_items()
        eval_stations = set(_NAMES[::6])  # 4 of 24 stations held out
        self._eval_items = [i for i in items if i["station"] in eval_stations]
        self._items = [i for i in items if i["station"] not in eval_stations]
        # Keep the held-out stations' pages out of the index, so nothing about eval leaks into training.
        for item in self._eval_items:
            KB.pop(item["doc"], None)
        random.Random(9).shuffle(self._items)
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["question"]

    @staticmethod
    def _final_text(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return score_answer(self._final_text(result), item)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        mean = await self.evaluate_items(self._eval_items, "eval/score")
        self._eval_metrics.append(("eval/score", mean))
        self._eval_metrics.append(("eval/seconds", time.time() - start))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = wandb_metrics or {}
        for key, value in self._eval_metrics:
            wandb_metrics[key] = value
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    StationKBEnv.cli()
