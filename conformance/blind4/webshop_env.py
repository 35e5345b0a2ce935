"""Shopping on a fake web shop: the model searches a small catalogue, opens product pages, fills its cart and checks
out, through four scripted site tools.

The site keeps one session (cart and placed order) per rollout, keyed by the rollout's task id. The reward reads the
order the rollout actually placed on the site: 1.0 for exactly the wanted product and quantity, else 0.0. What the
model says it bought does not count.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import threading

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You are a shopping assistant on a web shop. Use search, view_product, add_to_cart and checkout to buy what "
    "the user asks for, then tell them what you ordered."
)
SITE_LATENCY = 0.002  # seconds per page, so the agent's timing looks like a real site's
CATEGORIES = ["headphones", "kettle", "backpack", "desk lamp"]
COLORS = ["black", "white", "red", "blue"]


def _catalogue() -> dict[str, dict]:
    rng = random.Random(77)
    products = {}
    n = 0
    for category in CATEGORIES:
        for color in COLORS:
            for _ in range(3):
                n += 1
                pid = f"P{n:03d}"
                products[pid] = {
                    "id": pid,
                    "title": f"{rng.choice(['Acme', 'Zento', 'Bolt', 'Nimbus'])} {color} {category}",
                    "category": category,
                    "color": color,
                    "price": round(rng.uniform(9, 199), 2),
                    "rating": round(rng.uniform(2.5, 5.0), 1),
                }
    return products


CATALOGUE = _catalogue()


def target_of(category: str, color: str, min_rating: float) -> str | None:
    """The unique cheapest matching product, or None when there is none or a tie."""
    matching = sorted(
        (
            p
            for p in CATALOGUE.values()
            if p["category"] == category and p["color"] == color and p["rating"] >= min_rating
        ),
        key=lambda p: p["price"],
    )
    if not matching or (len(matching) > 1 and matching[0]["price"] == matching[1]["price"]):
        return None
    return matching[0]["id"]


def _make_items() -> list[dict]:
    items = []
    for category, color, min_rating, qty in itertools.product(CATEGORIES, COLORS, [3.0, 4.0], [1, 2]):
        target = target_of(category, color, min_rating)
        if target is not None:
            items.append(
                {
                    "id": f"{category}-{color}-{min_rating}-{qty}",
                    "request": f"Buy {qty} of the cheapest {color} {category} rated at least {min_rating} stars.",
                    "target": target,
                    "qty": qty,
                }
            )
    return items


class FakeShop:
    """The site: the catalogue, plus one session (cart, placed order) per rollout."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, dict] = {}

    def _session(self, task_id: str) -> dict:
        return self._sessions.setdefault(task_id, {"cart": {}, "order": None})

    def search(self, query: str) -> str:
        words = query.lower().split()
        hits = [p for p in CATALOGUE.values() if all(w in p["title"].lower() for w in words)]
        if not hits:
            return "no results"
        return "\n".join(f"{p['id']} | {p['title']} | ${p['price']:.2f}" for p in hits[:12])

    def view(self, product_id: str) -> str:
        p = CATALOGUE.get(product_id)
        if p is None:
            return f"error: no product {product_id!r}"
        return f"{p['id']}: {p['title']}\nprice: ${p['price']:.2f}\ncolor: {p['color']}\nrating: {p['rating']} stars"

    def add(self, task_id: str, product_id: str, qty: int) -> str:
        if product_id not in CATALOGUE:
            return f"error: no product {product_id!r}"
        if not 1 <= qty <= 10:
            return "error: qty must be 1-10"
        with self._lock:
            session = self._session(task_id)
            if session["order"] is not None:
                return "error: this session already checked out"
            session["cart"][product_id] = session["cart"].get(product_id, 0) + qty
            return f"cart: {session['cart']}"

    def checkout(self, task_id: str) -> str:
        with self._lock:
            session = self._session(task_id)
            if session["order"] is not None:
                return "error: already checked out"
            if not session["cart"]:
                return "error: the cart is empty"
            session["order"] = dict(session["cart"])
            return f"order placed: {session['order']}"

    def placed_order(self, task_id: str) -> dict | None:
        """The order the rollout placed (None if none), forgetting its session."""
        with self._lock:
            session = self._sessions.pop(task_id, None)
        return None if session is None else session["order"]


SHOP = FakeShop()


async def search(query: str) -> str:
    """Search the shop's catalogue by words of the product title.

    Args:
        query: Words that must all appear in the title, e.g. "red kettle".
    """
    await asyncio.sleep(SITE_LATENCY)
    return SHOP.search(query)


def view_product(product_id: str) -> str:
    """Open a product page: price, colour and rating.

    Args:
        product_id: The id shown in search results, e.g. P007.
    """
    return SHOP.view(product_id)


def add_to_cart(product_id: str, qty: int, task_id: str) -> str:
    """Add a product to your cart.

    Args:
        product_id: The product's id.
        qty: How many (1-10).
    """
    return SHOP.add(task_id, product_id, qty)


def checkout(task_id: str) -> str:
    """Place the order for everything in your cart (once)."""
    return SHOP.checkout(task_id)


class WebShopEnv(HermesAgentBaseEnv):
    """Web-like shopping with scripted site tools; graded on the order actually placed."""

    name = "blind4-webshop"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["shop"],
            max_agent_turns=12,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=4,
            total_steps=200,
            steps_per_eval=50,
            max_token_length=6144,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-webshop",
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
        for fn in (search, view_product, add_to_cart, checkout):
            registry.tool(fn, toolset="shop")
        items = _make_items()
        random.Random(8).shuffle(items)
        n_eval = max(4, len(items) // 5)
        self._eval_items, self._items = items[:n_eval], items[n_eval:]
        self._index = 0

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return item["request"]

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        order = SHOP.placed_order(ctx.task_id)
        return 1.0 if order == {item["target"]: item["qty"]} else 0.0

    async def evaluate(self, *args, **kwargs) -> None:
        await self.evaluate_items(self._eval_items, metric="eval/purchase_accuracy")


if __name__ == "__main__":
    WebShopEnv.cli()
