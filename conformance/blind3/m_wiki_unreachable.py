"""Derived from wiki_retrieval_env.py.

Answer questions about a fictional company from its internal wiki, found with a search tool, with a citation.

The wiki is built in (fictional facts, so the model cannot answer from memory). The agent has ``wiki_search``
(top pages for a query, with a snippet) and ``wiki_open`` (a page's full text). It must end with
``Answer: <answer> [doc:<page id>]``. The reward gives 0.8 for the right answer (normalised: case, spaces,
a trailing period, the gold phrase as whole words of a short answer) and 0.2 for citing the page that holds it. Questions are written so the answer sits in exactly
one page; eval questions are about pages no training question is about.
"""

from __future__ import annotations

import json
import re
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You answer questions about Larkspur Systems using its internal wiki. Search it, open the pages you need, "
    "and end with one line 'Answer: <answer> [doc:<page id>]' citing the page that states the answer."
)
W_ANSWER, W_CITE = 0.8, 0.2
_ANSWER = re.compile(r"Answer:\s*(.+?)\s*\[doc:([\w-]+)\]\s*$", re.IGNORECASE | re.MULTILINE)

WIKI: dict[str, dict] = {
    "onboarding": {
        "title": "Onboarding checklist",
        "text": "New hires get their laptop from the Harbor Street office. Badge photos are taken on Tuesdays. "
        "The buddy programme lasts six weeks.",
    },
    "expenses": {
        "title": "Expense policy",
        "text": "Meals while travelling are covered up to 45 euros per day. Receipts must be filed within "
        "14 days in the Ledgerly app. Taxis need a manager's approval.",
    },
    "oncall": {
        "title": "On-call rotation",
        "text": "The on-call rotation changes every Wednesday at 10:00. Pages go to the Tern channel. "
        "An incident is escalated after 20 minutes without acknowledgement.",
    },
    "deploys": {
        "title": "Deploying",
        "text": "Production deploys use the Kestrel pipeline. Deploys are frozen on Fridays after 15:00. "
        "A rollback needs two approvals.",
    },
    "security": {
        "title": "Security basics",
        "text": "Passwords rotate every 90 days. Hardware keys are issued by the Osprey team. "
        "Phishing reports go to the Wren mailbox.",
    },
    "holidays": {
        "title": "Holidays and leave",
        "text": "Staff get 27 days of annual leave. Unused leave carries over until the end of March. "
        "Parental leave is 20 weeks at full pay.",
    },
    "office": {
        "title": "Office facilities",
        "text": "The Harbor Street office has 4 meeting rooms named after rivers. The quiet floor is the "
        "third floor. Bike storage is in the basement.",
    },
    "data": {
        "title": "Data retention",
        "text": "Customer logs are kept for 400 days. Backups are encrypted with the Puffin key service. "
        "Deletion requests are handled within 30 days.",
    },
    "hiring": {
        "title": "Hiring process",
        "text": "Candidates do a take-home exercise of at most 3 hours. The final round is with the Heron "
        "panel. Offers are sent within 5 working days.",
    },
    "travel": {
        "title": "Travel booking",
        "text": "Flights are booked through the Albatross portal. Economy class is the default for flights "
        "under 6 hours. Hotels are capped at 160 euros per night.",
    },
}

QUESTIONS: list[dict] = [
    {"q": "How long does the buddy programme last?", "a": "6 weeks", "doc": "onboarding"},
    {"q": "On which day are badge photos taken?", "a": "Tuesdays", "doc": "onboarding"},
    {"q": "What is the daily meal allowance when travelling?", "a": "45 euros", "doc": "expenses"},
    {"q": "In which app are receipts filed?", "a": "Ledgerly", "doc": "expenses"},
    {"q": "When does the on-call rotation change?", "a": "Wednesday at 10:00", "doc": "oncall"},
    {
        "q": "After how many minutes without acknowledgement is an incident escalated?",
        "a": "20",
        "doc": "oncall",
    },
    {"q": "Which pipeline do production deploys use?", "a": "Kestrel", "doc": "deploys"},
    {"q": "How many approvals does a rollback need?", "a": "two", "doc": "deploys"},
    {"q": "Which team issues hardware keys?", "a": "Osprey", "doc": "security"},
    {"q": "Where do phishing reports go?", "a": "the Wren mailbox", "doc": "security"},
    {"q": "How many days of annual leave do staff get?", "a": "27", "doc": "holidays"},
    {"q": "Until when does unused leave carry over?", "a": "the end of March", "doc": "holidays"},
    {"q": "Which floor is the quiet floor?", "a": "the third floor", "doc": "office"},
    {"q": "How long are customer logs kept?", "a": "400 days", "doc": "data"},
    {"q": "Which service encrypts backups?", "a": "Puffin", "doc": "data"},
    {"q": "How long may the take-home exercise take at most?", "a": "3 hours", "doc": "hiring"},
    {"q": "Who runs the final hiring round?", "a": "the Heron panel", "doc": "hiring"},
    {"q": "Through which portal are flights booked?", "a": "Albatross", "doc": "travel"},
    {"q": "What is the hotel cap per night?", "a": "160 euros", "doc": "travel"},
]
EVAL_DOCS = ("hiring", "travel")


def _norm(text: str) -> str:
    text = re.sub(r"\s+", " ", text.strip().rstrip(".").lower())
    return re.sub(r"^(the|a|an) ", "", text)


def wiki_search(query: str) -> str:
    """Search the Larkspur wiki; returns up to three pages with a snippet.

    Args:
        query: Words to look for.
    """
    words = {w for w in re.findall(r"[a-z0-9]+", query.lower()) if len(w) > 2}
    ranked = []
    for doc_id, page in WIKI.items():
        text = (page["title"] + " " + page["text"]).lower()
        hits = sum(text.count(w) for w in words)
        if hits:
            ranked.append((-hits, doc_id))
    ranked.sort()
    results = [
        {"id": d, "title": WIKI[d]["title"], "snippet": WIKI[d]["text"][:60] + "..."} for _, d in ranked[:3]
    ]
    return json.dumps({"results": results})


def wiki_open(page_id: str) -> str:
    """Open a wiki page by id.

    Args:
        page_id: The page id from wiki_search.
    """
    page = WIKI.get(page_id)
    if page is None:
        return json.dumps({"error": f"no page {page_id!r}"})
    return json.dumps({"id": page_id, **page})


def _install_tools() -> None:
    for fn in (wiki_search, wiki_open):
        if fn.__name__ in registry.names():
            registry.unregister(fn.__name__)
        registry.tool(fn, toolset="wiki")


_install_tools()  # at import, as upstream tool modules do; setup() installs them again


class WikiRetrievalEnv(HermesAgentBaseEnv):
    """Retrieval over a built-in corpus with a cited answer."""

    name = "blind3-wiki-retrieval"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["wiki"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-wiki-retrieval",
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
        _install_tools()
        items = [{"id": f"wq{i:02d}", **q} for i, q in enumerate(QUESTIONS)]
        self._eval_items = [i for i in items if i["doc"] in EVAL_DOCS]
        self._items = [i for i in items if i["doc"] not in EVAL_DOCS]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["q"]

    @staticmethod
    def _final(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        found = _ANSWER.findall(self._final(result))
        if not found:
            return 0.0
        given, cited = found[-1]
        gold, said = _norm(item["a"]), _norm(given)
        # The gold phrase as whole words in a short answer: "20 minutes" is right for "20", an essay is not.
        right = re.search(rf"\b{re.escape(gold)}\b", said) is not None and len(said.split()) <= 8
        score = W_ANSWER if right else 0.0
        if cited.lower() == item["doc"]:
            score += W_CITE
        return round(score, 6)

    def conformance_transcripts(self, item: dict) -> dict:
        """Known-good and known-bad model turns for this question (searched, opened, cited; a guess)."""
        good = [
            {"tool_calls": [{"name": "wiki_search", "arguments": {"query": item["q"]}}]},
            {"tool_calls": [{"name": "wiki_open", "arguments": {"page_id": item["doc"]}}]},
            {"content": f"Answer: {item['a']} [doc:{item['doc']}]"},
        ]
        bad = [{"content": "Answer: I could not find it [doc:none]"}]
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
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            scores.append(score)
            samples.append({"id": item["id"], "answer": self._final(result), "score": score})
        n = max(1, len(scores))
        metrics = {
            "eval/mean_score": sum(scores) / n,
            "eval/answer_rate": sum(s >= W_ANSWER for s in scores) / n,
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
    WikiRetrievalEnv.cli()
