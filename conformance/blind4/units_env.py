"""Physics word problems with units: the model works a two-step problem (a calculator and a unit converter are
offered as tools) and answers `Answer: <number> <unit>`.

The reward converts the answer into the unit asked for (any unit of the right dimension is accepted: 79.2 km/h is
22 m/s) and accepts it within a 1% relative tolerance; a unit of the wrong dimension, or no unit, scores 0.
"""

from __future__ import annotations

import ast
import math
import operator
import random
import re
import time
import uuid

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You solve physics problems carefully, with units. You may use the calc and convert tools. "
    "Finish with a line 'Answer: <number> <unit>'."
)
G = 9.81
REL_TOL = 0.01

# unit -> (dimension, factor to the SI unit of that dimension)
UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "cm": ("length", 0.01),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "m/s": ("speed", 1.0),
    "km/h": ("speed", 1000.0 / 3600.0),
    "J": ("energy", 1.0),
    "kJ": ("energy", 1000.0),
    "W": ("power", 1.0),
    "kW": ("power", 1000.0),
    "kg": ("mass", 1.0),
    "g": ("mass", 0.001),
    "kg/m^3": ("density", 1.0),
    "g/cm^3": ("density", 1000.0),
}


def _problem(rng: random.Random) -> dict:
    kind = rng.choice(["speed", "lift", "density", "trip", "power"])
    if kind == "speed":
        d, t = rng.randint(5, 400), rng.choice([0.5, 1, 1.5, 2, 2.5, 3, 4])
        q, value, unit = (
            f"A train covers {d} km in {t} h. What is its average speed in m/s?",
            d * 1000 / (t * 3600),
            "m/s",
        )
    elif kind == "lift":
        m, h = rng.randint(2, 20), rng.randint(1, 10)
        q, value, unit = (
            f"How much energy, in kJ, does it take to lift {m} kg by {h} m (g = {G} m/s^2)?",
            m * G * h / 1000,
            "kJ",
        )
    elif kind == "density":
        m, v = rng.randint(50, 900), rng.randint(20, 400)
        q, value, unit = (
            f"A block of {m} g has a volume of {v} cm^3. What is its density in kg/m^3?",
            m / v * 1000,
            "kg/m^3",
        )
    elif kind == "trip":
        d, s = rng.randint(3, 120), rng.choice([30, 45, 60, 80, 90, 100])
        q, value, unit = f"How many minutes does a {d} km trip take at {s} km/h?", d / s * 60, "min"
    else:
        e, t = rng.randint(1, 60), rng.randint(2, 120)
        q, value, unit = (
            f"A motor delivers {e} kJ in {t} s. What is its average power in W?",
            e * 1000 / t,
            "W",
        )
    return {"question": q, "value": value, "unit": unit}


def _make_items(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    items, seen = [], set()
    while len(items) < n:
        item = _problem(rng)
        if item["question"] not in seen:
            seen.add(item["question"])
            items.append(item)
    return items


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _eval_node(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 10:
            raise ValueError("exponent too large")
        return _OPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval_node(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "sqrt"
        and len(node.args) == 1
    ):
        return math.sqrt(_eval_node(node.args[0]))
    raise ValueError("only numbers, + - * / ** and sqrt() are allowed")


def calc(expression: str) -> str:
    """Evaluate an arithmetic expression (numbers, + - * / **, sqrt()).

    Args:
        expression: For example (120 * 1000) / (1.5 * 3600).
    """
    try:
        return repr(_eval_node(ast.parse(expression, mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError) as exc:
        return f"error: {exc}"


def convert(value: float, from_unit: str, to_unit: str) -> str:
    """Convert a value between two units of the same dimension (m, km, cm, s, min, h, m/s, km/h, J, kJ, W, kW, kg,
    g, kg/m^3, g/cm^3).

    Args:
        value: The number to convert.
        from_unit: Its unit.
        to_unit: The unit wanted.
    """
    if from_unit not in UNITS or to_unit not in UNITS:
        return f"error: known units are {', '.join(UNITS)}"
    (dim_a, fa), (dim_b, fb) = UNITS[from_unit], UNITS[to_unit]
    if dim_a != dim_b:
        return f"error: cannot convert {dim_a} to {dim_b}"
    return repr(value * fa / fb)


_ANSWER = re.compile(r"Answer:\s*(-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*([A-Za-z/^0-9]+)?")


def parse_answer(text: str) -> tuple[float, str | None] | None:
    """The number and unit of the last 'Answer:' line."""
    found = _ANSWER.findall(text)
    if not found:
        return None
    number, unit = found[-1]
    return float(number.replace(",", "")), (unit or None)


def score_answer(text: str, value: float, unit: str) -> float:
    parsed = parse_answer(text)
    if parsed is None or parsed[1] not in UNITS:
        return 0.0
    got, got_unit = parsed
    (dim, factor), (want_dim, want_factor) = UNITS[got_unit], UNITS[unit]
    if dim != want_dim:
        return 0.0
    converted = got * factor / want_factor
    return 1.0 if math.isclose(converted, value, rel_tol=REL_TOL) else 0.0


def final_text(result: AgentResult) -> str:
    for msg in reversed(result.messages):
        if msg.get("role") == "assistant" and msg.get("content"):
            return msg["content"]
    return ""


class UnitsPhysicsEnv(HermesAgentBaseEnv):
    """Numeric answers with units, graded with unit conversion and a relative tolerance."""

    name = "blind4-units-physics"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["physics"],
            max_agent_turns=6,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=500,
            steps_per_eval=100,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-units-physics",
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
        registry.tool(calc, toolset="physics")
        registry.tool(convert, toolset="physics")
        self._items = _make_items(200, seed=1)
        seen = {i["question"] for i in self._items}
        self._eval_items = [i for i in _make_items(60, seed=2) if i["question"] not in seen][:20]
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']}\nEnd with 'Answer: <number> <unit>'."

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        return score_answer(final_text(result), item["value"], item["unit"])

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        scores = []
        for item in self._eval_items:
            task_id = str(uuid.uuid4())
            result = await self.run_agent(self.initial_messages(item), task_id=task_id, temperature=0.0)
            scores.append(await self.score_rollout(item, result, task_id))
        accuracy = sum(scores) / len(scores)
        self._eval_metrics.append(("eval/accuracy", accuracy))
        await self.evaluate_log(metrics={"eval/accuracy": accuracy}, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = dict(wandb_metrics or {})
        wandb_metrics.update(self._eval_metrics)
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    UnitsPhysicsEnv.cli()
