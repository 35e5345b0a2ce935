"""Derived from support_desk_env.py.

A support desk: several toolsets, a simulated customer, and a billing state machine the reward inspects.

Each item is a ticket ("my order arrived damaged"). The agent has a CRM toolset (look the customer up, ask the
simulated customer a question) and a billing toolset (verify the customer's email, issue a refund). Billing is a
small state machine per rollout: a refund needs a verified customer, an order of that customer, an amount no
larger than its total, and delivery within 30 days. The reward reads what billing actually recorded for THIS
rollout (not what the transcript claims): 0.7 when the refunds are exactly the right ones, 0.3 for a final reply
that tells the customer the outcome; any wrong refund zeroes the score, since money went out.
"""

from __future__ import annotations

import json
import threading
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You are a support agent. Look the customer up, find out which order the ticket is about (ask the customer "
    "when it is unclear), verify the customer's email before any refund, follow the 30-day refund policy, and "
    "finish with a short reply to the customer saying what you did."
)
W_REFUND, W_REPLY = 0.7, 0.3
REFUND_WINDOW_DAYS = 30

_PRODUCTS = ["kettle", "desk lamp", "blender", "headphones", "backpack", "monitor", "toaster", "router"]
_PEOPLE = [
    ("Ana Ruiz", "ana.ruiz@example.com"),
    ("Tom Becker", "tom.b@example.com"),
    ("Mei Chen", "mei.chen@example.com"),
    ("Kofi Mensah", "kofi.m@example.com"),
    ("Lena Novak", "lena.novak@example.com"),
    ("Ravi Patel", "ravi.p@example.com"),
    ("Sara Lind", "sara.lind@example.com"),
    ("Omar Haddad", "omar.h@example.com"),
]


def _make_tickets() -> dict[str, dict]:
    """Built-in tickets: each customer has three orders; one arrived damaged; some are past the window."""
    tickets = {}
    n = 0
    for p, (name, email) in enumerate(_PEOPLE):
        for variant in range(2):
            n += 1
            tid = f"T{1000 + n}"
            orders = []
            for k in range(3):
                product = _PRODUCTS[(p + k + variant) % len(_PRODUCTS)]
                orders.append(
                    {
                        "order_id": f"O{n:02d}{k}",
                        "item": product,
                        "total": float(20 + 15 * ((p + k) % 5) + variant * 5),
                        "days_since_delivery": [4, 12, 45][(k + variant) % 3],
                    }
                )
            damaged = orders[(p + variant) % 3]
            eligible = damaged["days_since_delivery"] <= REFUND_WINDOW_DAYS
            tickets[tid] = {
                "ticket_id": tid,
                "customer": name,
                "email": email,
                "orders": orders,
                "damaged": damaged["order_id"],
                "expected_refunds": {damaged["order_id"]: damaged["total"]} if eligible else {},
            }
    return tickets


TICKETS = _make_tickets()

# Billing state lives in the rollout's own sandbox (task id), so the reward reads exactly what this rollout did,
# reading it changes nothing, and the sandbox's cleanup removes it. The agent has no file or terminal tool to touch it.
LEDGER = ".billing/ledger.json"
_LOCK = threading.RLock()


def _load(task_id: str) -> dict:
    try:
        return json.loads(ToolContext(task_id).read_file(LEDGER))
    except FileNotFoundError:
        return {"verified": False, "refunds": {}}


def _save(task_id: str, state: dict) -> None:
    ToolContext(task_id).write_file(LEDGER, json.dumps(state))


def lookup_customer(ticket_id: str) -> str:
    """Look up the customer of a ticket and their recent orders.

    Args:
        ticket_id: The ticket id, e.g. T1001.
    """
    t = TICKETS.get(ticket_id)
    if t is None:
        return json.dumps({"error": f"no ticket {ticket_id}"})
    return json.dumps({"customer": t["customer"], "orders": t["orders"]})


def ask_customer(ticket_id: str, question: str) -> str:
    """Send the customer a question and get their reply.

    Args:
        ticket_id: The ticket id.
        question: What to ask the customer.
    """
    t = TICKETS.get(ticket_id)
    if t is None:
        return json.dumps({"error": f"no ticket {ticket_id}"})
    q = question.lower()
    damaged = next(o for o in t["orders"] if o["order_id"] == t["damaged"])
    if "email" in q:
        return json.dumps({"customer_reply": f"Sure, it's {t['email']}."})
    if any(word in q for word in ("which", "order", "item", "product")):
        return json.dumps({"customer_reply": f"It's the {damaged['item']}. It arrived cracked."})
    return json.dumps(
        {"customer_reply": "Sorry, I'm not sure what you mean. One of my orders arrived broken."}
    )


def verify_customer(ticket_id: str, email: str, task_id: str) -> str:
    """Verify the customer's identity with the email they gave.

    Args:
        ticket_id: The ticket id.
        email: The email address the customer gave.
    """
    t = TICKETS.get(ticket_id)
    if t is None:
        return json.dumps({"error": f"no ticket {ticket_id}"})
    if email.strip().lower() != t["email"]:
        return json.dumps({"verified": False, "error": "email does not match our records"})
    with _LOCK:
        state = _load(task_id)
        state["verified"] = True
        _save(task_id, state)
    return json.dumps({"verified": True})


def issue_refund(ticket_id: str, order_id: str, amount: float, task_id: str) -> str:
    """Refund an order of the ticket's customer (needs a verified customer; 30-day window).

    Args:
        ticket_id: The ticket id.
        order_id: The order to refund.
        amount: The amount to refund, at most the order total.
    """
    t = TICKETS.get(ticket_id)
    if t is None:
        return json.dumps({"error": f"no ticket {ticket_id}"})
    order = next((o for o in t["orders"] if o["order_id"] == order_id), None)
    with _LOCK:
        state = _load(task_id)
        if not state["verified"]:
            return json.dumps({"error": "customer not verified: call verify_customer first"})
        if order is None:
            return json.dumps({"error": f"order {order_id} does not belong to this customer"})
        if order["days_since_delivery"] > REFUND_WINDOW_DAYS:
            return json.dumps({"error": f"order {order_id} is outside the {REFUND_WINDOW_DAYS}-day window"})
        if amount <= 0 or amount > order["total"]:
            return json.dumps({"error": f"amount must be in (0, {order['total']}]"})
        if order_id in state["refunds"]:
            return json.dumps({"error": f"order {order_id} was already refunded"})
        state["refunds"][order_id] = float(amount)
        _save(task_id, state)
    with open("refund_audit.jsonl", "a") as audit:
        audit.write(json.dumps({"ticket": ticket_id, "order": order_id, "amount": float(amount)}) + "\n")
    return json.dumps({"refunded": order_id, "amount": float(amount)})


def _install_tools() -> None:
    """Register the CRM and billing toolsets on the default registry (replacing an earlier copy of them)."""
    for fn, toolset in (
        (lookup_customer, "crm"),
        (ask_customer, "crm"),
        (verify_customer, "billing"),
        (issue_refund, "billing"),
    ):
        if fn.__name__ in registry.names():
            registry.unregister(fn.__name__)
        registry.tool(fn, toolset=toolset)


_install_tools()  # at import, as upstream tool modules do; setup() installs them again


class SupportDeskEnv(HermesAgentBaseEnv):
    """Multi-turn support with a simulated customer and a billing state machine per rollout."""

    name = "blind3-support-desk"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["crm", "billing"],
            max_agent_turns=12,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=150,
            steps_per_eval=50,
            max_token_length=8192,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind3-support-desk",
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
        ids = sorted(TICKETS)
        # Hold out whole customers for eval (two tickets each), not single tickets.
        eval_customers = {"Sara Lind", "Omar Haddad"}
        self._eval_items = [{"ticket_id": t} for t in ids if TICKETS[t]["customer"] in eval_customers]
        self._items = [{"ticket_id": t} for t in ids if TICKETS[t]["customer"] not in eval_customers]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        t = TICKETS[item["ticket_id"]]
        return (
            f'Ticket {t["ticket_id"]} from {t["customer"]}: "Hi, one of my recent orders arrived damaged. '
            'Can I get my money back?"'
        )

    @staticmethod
    def _final_reply(result: AgentResult) -> str:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                return msg["content"]
        return ""

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        t = TICKETS[item["ticket_id"]]
        with _LOCK:
            refunds = _load(ctx.task_id)["refunds"]
        expected = t["expected_refunds"]
        if any(order_id not in expected for order_id in refunds):
            return 0.0  # money went to the wrong order
        score = W_REFUND if refunds == expected else 0.0
        reply = self._final_reply(result).lower()
        if expected:
            told = t["damaged"].lower() in reply
        else:
            told = str(REFUND_WINDOW_DAYS) in reply
        if told:
            score += W_REPLY
        return round(score, 6)

    def conformance_transcripts(self, item: dict) -> dict:
        """Known-good and known-bad model turns for this ticket (the policy followed; a refund claimed, not made)."""
        t = TICKETS[item["ticket_id"]]
        tid, damaged = t["ticket_id"], next(o for o in t["orders"] if o["order_id"] == t["damaged"])
        good = [
            {"tool_calls": [{"name": "lookup_customer", "arguments": {"ticket_id": tid}}]},
            {
                "tool_calls": [
                    {"name": "ask_customer", "arguments": {"ticket_id": tid, "question": "Which item?"}}
                ]
            },
        ]
        if t["expected_refunds"]:
            refund = {"ticket_id": tid, "order_id": damaged["order_id"], "amount": damaged["total"]}
            good += [
                {
                    "tool_calls": [
                        {"name": "ask_customer", "arguments": {"ticket_id": tid, "question": "Your email?"}}
                    ]
                },
                {
                    "tool_calls": [
                        {"name": "verify_customer", "arguments": {"ticket_id": tid, "email": t["email"]}}
                    ]
                },
                {"tool_calls": [{"name": "issue_refund", "arguments": refund}]},
                {"content": f"I refunded order {damaged['order_id']} in full."},
            ]
        else:
            good.append(
                {
                    "content": f"Order {damaged['order_id']} is past our {REFUND_WINDOW_DAYS}-day refund window, sorry."
                }
            )
        bad = [{"content": f"I refunded order {damaged['order_id']}."}]
        return {"good": [good], "bad": [bad]}

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        scores = []
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
                scores.append(await self.compute_reward(item, result, ctx))
            finally:
                ctx.cleanup()
        n = max(1, len(scores))
        metrics = {"eval/mean_score": sum(scores) / n, "eval/resolved": sum(s == 1.0 for s in scores) / n}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(
            metrics=metrics,
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
    SupportDeskEnv.cli()
