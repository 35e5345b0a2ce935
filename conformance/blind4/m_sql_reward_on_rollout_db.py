"""Text-to-SQL with a live database: the model explores a small shop database through a `run_sql` tool, then
answers with one SELECT in a ```sql block.

Each rollout gets its own copy of the database (a file in its sandbox), so what one rollout does to its data never
shows in another. The reward runs the answer and the gold query on the rollout's own database (the data the
model saw) and compares the rows: in order when the question asks for an order, as a multiset otherwise.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import get_sandbox, registry

SYSTEM_PROMPT = (
    "You are a data analyst with read access to a SQLite database through the run_sql tool. "
    "Explore it if you need to, then give your final query in a ```sql code block."
)
DB_FILE = "shop.db"
MAX_ROWS_SHOWN = 20
MAX_VM_STEPS = 2_000_000  # a cross join of cross joins is stopped, not waited for

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     amount REAL NOT NULL, status TEXT NOT NULL);
"""
CUSTOMERS = [
    (1, "Ada", "Leeds"),
    (2, "Bram", "Utrecht"),
    (3, "Chen", "Leeds"),
    (4, "Dana", "Porto"),
    (5, "Emil", "Utrecht"),
    (6, "Fay", "Porto"),
]
ORDERS = [
    (1, 1, 120.0, "paid"),
    (2, 1, 35.5, "refunded"),
    (3, 2, 80.0, "paid"),
    (4, 3, 250.0, "paid"),
    (5, 3, 15.0, "paid"),
    (6, 4, 99.0, "pending"),
    (7, 5, 310.0, "paid"),
    (8, 5, 42.0, "refunded"),
    (9, 2, 60.0, "paid"),
    (10, 6, 75.0, "pending"),
]

QUESTIONS = [
    (
        "Which customers live in Leeds? Return their names.",
        "SELECT name FROM customers WHERE city = 'Leeds'",
        False,
    ),
    ("How many orders are paid?", "SELECT COUNT(*) FROM orders WHERE status = 'paid'", False),
    (
        "List the names of customers with at least one paid order over 100.",
        "SELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        "WHERE o.status = 'paid' AND o.amount > 100",
        False,
    ),
    (
        "Total paid amount per city, largest first (city, total).",
        "SELECT c.city, SUM(o.amount) AS t FROM customers c JOIN orders o ON o.customer_id = c.id "
        "WHERE o.status = 'paid' GROUP BY c.city ORDER BY t DESC",
        True,
    ),
    ("What is the largest single order amount?", "SELECT MAX(amount) FROM orders", False),
    (
        "Names of the top 3 customers by total paid amount, highest first.",
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'paid' "
        "GROUP BY c.id ORDER BY SUM(o.amount) DESC LIMIT 3",
        True,
    ),
    (
        "Which cities have a pending order? Return each city once.",
        "SELECT DISTINCT c.city FROM customers c "
        "JOIN orders o ON o.customer_id = c.id WHERE o.status = 'pending'",
        False,
    ),
    (
        "How many customers have never had a refund?",
        "SELECT COUNT(*) FROM customers WHERE id NOT IN "
        "(SELECT customer_id FROM orders WHERE status = 'refunded')",
        False,
    ),
    (
        "Order ids and amounts of refunded orders, smallest amount first.",
        "SELECT id, amount FROM orders WHERE status = 'refunded' ORDER BY amount ASC",
        True,
    ),
    (
        "Average paid order amount, rounded to 2 decimals.",
        "SELECT ROUND(AVG(amount), 2) FROM orders WHERE status = 'paid'",
        False,
    ),
    (
        "Names of customers with no orders at all.",
        "SELECT name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders)",
        False,
    ),
    (
        "Number of orders per status, most common first (status, n).",
        "SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY n DESC, status",
        True,
    ),
]


def _make_items() -> list[dict]:
    return [
        {"id": f"q{i:02d}", "question": q, "gold": sql, "ordered": ordered}
        for i, (q, sql, ordered) in enumerate(QUESTIONS)
    ]


def fresh_db(path: str | Path = ":memory:") -> sqlite3.Connection:
    """The shop database, built from the constants above."""
    conn = sqlite3.connect(str(path))
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO customers VALUES (?, ?, ?)", CUSTOMERS)
    conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
    conn.commit()
    return conn


def _rollout_db(task_id: str) -> sqlite3.Connection:
    """This rollout's own copy of the database, in its sandbox (made on first use)."""
    sandbox = get_sandbox(task_id)
    assert sandbox is not None
    path = sandbox.resolve_path(DB_FILE)
    if not path.exists():
        fresh_db(path).close()
    return sqlite3.connect(str(path))


def run_sql(query: str, task_id: str) -> str:
    """Run one SQL statement on the shop database and return the rows as JSON (at most 20 shown).

    Args:
        query: One SQLite statement, e.g. SELECT name FROM customers.
    """
    conn = _rollout_db(task_id)
    try:
        rows = execute(conn, query)
        conn.commit()
    except sqlite3.Error as exc:
        return f"error: {exc}"
    finally:
        conn.close()
    more = " (more rows not shown)" if len(rows) > MAX_ROWS_SHOWN else ""
    return json.dumps([list(r) for r in rows[:MAX_ROWS_SHOWN]]) + more


def extract_sql(text: str) -> str | None:
    """The last ```sql block of a reply (or the last bare ``` block)."""
    for fence in ("```sql", "```SQL", "```"):
        start = text.rfind(fence)
        if start != -1:
            body = text[start + len(fence) :]
            end = body.find("```")
            if end != -1:
                return body[:end].strip().rstrip(";").strip() or None
    return None


def _deny_files(action: int, *_args: object) -> int:
    """sqlite authorizer: no ATTACH (nor VACUUM INTO, which attaches), so no query reads or creates a host file."""
    return (
        sqlite3.SQLITE_DENY if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) else sqlite3.SQLITE_OK
    )


def execute(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    """Rows of a query, stopped when it runs too long; queries may not touch other files."""
    conn.set_authorizer(_deny_files)
    calls = 0

    def _budget() -> int:  # called every 1000 VM steps; non-zero aborts the query
        nonlocal calls
        calls += 1
        return 1 if calls * 1000 > MAX_VM_STEPS else 0

    conn.set_progress_handler(_budget, 1000)
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.set_progress_handler(None, 0)


def _norm(rows: list[tuple]) -> list[tuple]:
    return [tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows]


def rows_match(got: list[tuple], want: list[tuple], ordered: bool) -> bool:
    """Same rows; in the same order only when the question asks for an order."""
    norm = _norm
    if ordered:
        return norm(got) == norm(want)
    return Counter(norm(got)) == Counter(norm(want))


class SqlShopEnv(HermesAgentBaseEnv):
    """Text-to-SQL scored by execution on a fresh database; the model explores its own copy with run_sql."""

    name = "blind4-sql-shop"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["sql"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-sql-shop",
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
        registry.tool(run_sql, toolset="sql")
        items = _make_items()
        random.Random(5).shuffle(items)
        self._eval_items = items[:3]
        self._items = items[3:]
        self._index = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            "Tables: customers(id, name, city), orders(id, customer_id, amount, status); "
            "status is 'paid', 'pending' or 'refunded'.\n\n"
            f"Question: {item['question']}\n\nEnd with your query in a ```sql block."
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
        sql = extract_sql(text)
        if sql is None:
            return 0.0
        conn = _rollout_db(ctx.task_id)
        try:
            want = execute(conn, item["gold"])
            try:
                got = execute(conn, sql)
            except sqlite3.Error:
                return 0.0
        finally:
            conn.close()
        return 1.0 if rows_match(got, want, item["ordered"]) else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        await self.evaluate_items(self._eval_items, metric="eval/execution_accuracy")


if __name__ == "__main__":
    SqlShopEnv.cli()
