"""Structured extraction: turn a short order email into a JSON record of a fixed schema (no tools).

The reward parses the reply's JSON (a ```json block, else the outermost braces), then gives one point per schema
field that matches the gold record: strings compared case- and space-insensitively, the amount as a number, the
due date in ISO form, and the line items as a multiset of {sku, qty}. The score is the share of the 7 fields.
"""

from __future__ import annotations

import json
import random
import re

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = "You extract structured data from emails. Reply with one JSON object in a ```json block."
FIELDS = ["customer", "email", "company", "amount", "currency", "due_date", "items"]
SCHEMA_TEXT = (
    '{"customer": str, "email": str, "company": str, "amount": number, "currency": "USD"|"EUR"|"GBP", '
    '"due_date": "YYYY-MM-DD", "items": [{"sku": str, "qty": int}]}'
)
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}
PEOPLE = ["Maria Lopez", "Tom Becker", "Aiko Tanaka", "Sven Olsen", "Priya Nair", "Luca Rossi", "Nora Kim"]
COMPANIES = ["Northwind Traders", "Blue Heron Ltd", "Kestrel Labs", "Orchard & Co", "Tidewater GmbH"]


def _email_text(rec: dict, rng: random.Random) -> str:
    y, m, d = (int(x) for x in rec["due_date"].split("-"))
    date = rng.choice([f"{MONTHS[m - 1]} {d}, {y}", f"{d} {MONTHS[m - 1]} {y}", f"{y}/{m:02d}/{d:02d}"])
    money = f"{SYMBOLS[rec['currency']]}{rec['amount']:,.2f}"
    lines = "\n".join(f"  - {it['qty']} x {it['sku']}" for it in rec["items"])
    return (
        f"Hi,\n\nplease invoice {rec['company']} for the order below, {money} in total, due {date}.\n{lines}\n\n"
        f"Contact: {rec['customer']} <{rec['email']}>\nThanks!"
    )


def _make_items(n: int = 60, seed: int = 99) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        person = rng.choice(PEOPLE)
        company = rng.choice(COMPANIES)
        skus = rng.sample(["AX-100", "BQ-220", "CZ-310", "DL-404", "EF-512", "GH-777"], rng.randint(1, 3))
        rec = {
            "customer": person,
            "email": person.lower().replace(" ", ".") + "@" + company.split()[0].lower() + ".example",
            "company": company,
            "amount": round(rng.uniform(20, 5000), 2),
            "currency": rng.choice(list(SYMBOLS)),
            "due_date": f"{rng.randint(2024, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "items": [{"sku": s, "qty": rng.randint(1, 9)} for s in skus],
        }
        out.append({"id": f"mail-{k:03d}", "email_text": _email_text(rec, rng), "record": rec})
    return out


def extract_json(text: str) -> dict | None:
    """The JSON object of a reply: the last ```json block, else from the first '{' to the last '}'."""
    blocks = re.findall(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    candidates = [b.strip() for b in reversed(blocks)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _norm(value: object) -> str:
    return " ".join(str(value).split()).casefold()


def _same_items(got: object, expected: list[dict]) -> bool:
    if not isinstance(got, list):
        return False
    remaining = list(expected)
    for entry in got:
        if not isinstance(entry, dict):
            return False
        key = {"sku": _norm(entry.get("sku", "")), "qty": entry.get("qty")}
        match = next((e for e in remaining if _norm(e["sku"]) == key["sku"] and e["qty"] == key["qty"]), None)
        if match is None:
            return False
        remaining.remove(match)
    return not remaining


def field_score(answer: dict, expected: dict) -> float:
    correct = 0
    for key in FIELDS:
        got, want = answer.get(key), expected[key]
        if key == "items":
            ok = _same_items(got, want)
        elif key == "amount":
            ok = isinstance(got, (int, float)) and not isinstance(got, bool) and abs(got - want) < 0.005
        else:
            ok = got is not None and _norm(got) == _norm(want)
        correct += ok
    return correct / len(FIELDS)


class JsonExtractEnv(HermesAgentBaseEnv):
    """Email-to-JSON extraction scored field by field against the gold record."""

    name = "blind4-json-extract"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=[],
            max_agent_turns=1,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=300,
            steps_per_eval=50,
            max_token_length=2048,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-json-extract",
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
        self._items, self._eval_items = items[:48], items[48:]
        random.Random(3).shuffle(self._items)
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Extract the order from this email as JSON with exactly this shape:\n{SCHEMA_TEXT}\n"
            "Give the amount as a plain number and the due date as YYYY-MM-DD.\n\n"
            f"Email:\n{item['email_text']}"
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        text = next(
            (
                m["content"]
                for m in reversed(result.messages)
                if m.get("role") == "assistant" and m.get("content")
            ),
            "",
        )
        answer = extract_json(text)
        if answer is None:
            return 0.0
        return field_score(answer, item["record"])

    async def evaluate(self, *args, **kwargs) -> None:
        mean = await self.evaluate_items(self._eval_items, metric="eval/field_accuracy")
        self._eval_metrics.append(("eval/field_accuracy", mean))

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = dict(wandb_metrics or {})
        wandb_metrics.update(self._eval_metrics)
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    JsonExtractEnv.cli()
