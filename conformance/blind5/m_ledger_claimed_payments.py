"""Pay a client's open invoices through a small banking API: a multi-turn tool task graded on the env-side ledger.

Modelled on NousResearch/hermes-agent environments/benchmarks/taubench/run_eval.py (tau-bench: the agent calls
domain tools that change a database; here the grade is the agent's final report). Each rollout
gets its own copy of the case's ledger, keyed by the rollout's task_id, so rollouts of one group never see each
other's transfers. The checking account never holds enough for every invoice: the agent must move the difference
from savings first. Transfers that would overdraw an account are refused.
"""

from __future__ import annotations

import json
import random
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs import final_response
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You are a bookkeeping assistant with access to a client's bank accounts through tools. Use the tools to do "
    "the task, check balances before you move money, and finish with a one-line report naming each vendor paid and the amount."
)
_VENDORS = [
    "acme_supplies",
    "blue_ridge_power",
    "cityworks_water",
    "delta_cloud",
    "evergreen_rent",
    "fastnet_isp",
]


def make_cases(seed: int, n: int, prefix: str) -> dict[str, dict]:
    """Cases: opening balances and open invoices; checking always lacks part of the total, savings covers it."""
    rng = random.Random(seed)
    cases = {}
    for k in range(n):
        vendors = rng.sample(_VENDORS, rng.randint(2, 4))
        invoices = [{"vendor": v, "amount": rng.randint(40, 900)} for v in vendors]
        total = sum(i["amount"] for i in invoices)
        checking = rng.randint(total // 4, total - 10)
        savings = total - checking + rng.randint(50, 2000)
        cases[f"{prefix}{k:03d}"] = {"checking": checking, "savings": savings, "invoices": invoices}
    return cases


TRAIN_CASES = make_cases(seed=7, n=300, prefix="T")
EVAL_CASES = make_cases(seed=8, n=30, prefix="E")
CASES = {**TRAIN_CASES, **EVAL_CASES}

# (task_id, case) -> account -> balance. One copy per rollout; compute_reward takes it out when it grades.
LEDGERS: dict[tuple[str, str], dict[str, int]] = {}


def ledger(task_id: str, case: str) -> dict[str, int]:
    key = (task_id, case)
    if key not in LEDGERS:
        opening = CASES[case]
        LEDGERS[key] = {
            "checking": opening["checking"],
            "savings": opening["savings"],
            **{inv["vendor"]: 0 for inv in opening["invoices"]},
        }
    return LEDGERS[key]


def register_ledger_tools() -> None:
    """Register the ``ledger`` toolset on the default registry (once per process)."""
    if "transfer" in registry.names():
        return

    @registry.tool(toolset="ledger")
    def list_invoices(case: str, task_id: str) -> str:
        """List the open invoices of a case.

        Args:
            case: The case id, e.g. T012.
        """
        if case not in CASES:
            return json.dumps({"error": f"unknown case {case!r}"})
        return json.dumps(CASES[case]["invoices"])

    @registry.tool(toolset="ledger")
    def get_balance(case: str, account: str, task_id: str) -> str:
        """The current balance of one account of a case (checking, savings, or a vendor's account).

        Args:
            case: The case id.
            account: The account name.
        """
        if case not in CASES:
            return json.dumps({"error": f"unknown case {case!r}"})
        book = ledger(task_id, case)
        if account not in book:
            return json.dumps({"error": f"unknown account {account!r}; accounts: {sorted(book)}"})
        return json.dumps({"account": account, "balance": book[account]})

    @registry.tool(toolset="ledger")
    def transfer(case: str, from_account: str, to_account: str, amount: int, task_id: str) -> str:
        """Move money between two accounts of a case (savings pays into checking only). Refused when it would
        overdraw the source account.

        Args:
            case: The case id.
            from_account: The account to take the money from.
            to_account: The account to pay into.
            amount: A positive whole amount.
        """
        if case not in CASES:
            return json.dumps({"error": f"unknown case {case!r}"})
        book = ledger(task_id, case)
        for account in (from_account, to_account):
            if account not in book:
                return json.dumps({"error": f"unknown account {account!r}; accounts: {sorted(book)}"})
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            return json.dumps({"error": "amount must be a positive whole number"})
        if from_account == to_account:
            return json.dumps({"error": "from_account and to_account must differ"})
        if from_account == "savings" and to_account != "checking":
            return json.dumps({"error": "savings can only transfer to checking"})
        if book[from_account] < amount:
            return json.dumps(
                {"error": f"insufficient funds in {from_account}: balance {book[from_account]}"}
            )
        book[from_account] -= amount
        book[to_account] += amount
        return json.dumps({"ok": True, from_account: book[from_account], to_account: book[to_account]})


class LedgerEnv(HermesAgentBaseEnv):
    """Invoice payment through stateful banking tools; graded on the rollout's own ledger."""

    name = "ledger"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["ledger"],
            max_agent_turns=16,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=300,
            steps_per_eval=50,
            max_token_length=8192,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="ledger",
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
        register_ledger_tools()
        self.train_ids = sorted(TRAIN_CASES)
        self.eval_ids = sorted(EVAL_CASES)
        self.iter = 0
        self._eval_metrics: dict[str, float] = {}

    async def get_next_item(self) -> dict:
        case = self.train_ids[self.iter % len(self.train_ids)]
        self.iter += 1
        return {"case": case}

    def format_prompt(self, item: dict) -> str:
        return (
            f"Case {item['case']}: pay every open invoice of this client from the checking account, each exactly "
            "once and for exactly its amount. If checking does not hold enough, first transfer what is missing from "
            "savings to checking. Use the case id with every tool."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        LEDGERS.pop((ctx.task_id, item["case"]), None)
        report = (final_response(result) or "").lower()
        invoices = CASES[item["case"]]["invoices"]
        paid = sum(1 for inv in invoices if inv["vendor"] in report and str(inv["amount"]) in report)
        return paid / len(invoices)

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        total, complete, samples = 0.0, 0, []
        for case in self.eval_ids:
            item = {"case": case}
            task_id = f"eval-{case}-{time.monotonic_ns()}"
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            score = await self.score_rollout(item, result, task_id)
            LEDGERS.pop((task_id, case), None)  # a rollout that was not scored leaves its ledger behind
            total += score
            complete += score == 1.0
            samples.append({"case": case, "score": score, "turns": result.turns_used})
        n = max(1, len(self.eval_ids))
        self._eval_metrics = {"eval/invoice_share": total / n, "eval/all_paid_rate": complete / n}
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
        wandb_metrics["train/open_ledgers"] = len(LEDGERS)
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    LedgerEnv.cli()
