"""Open-set questions: several answers are right ("name one noble gas"), each with its accepted spellings.

The model may use a terminal, then ends with ``Answer: <one answer>``. ``compute_reward`` takes only that final
answer line, normalizes it (case, punctuation, a leading article) and gives 1.0 when it equals any accepted
spelling of any correct answer; hedging ("neon, argon or xenon") is not one answer and scores 0.
"""

from __future__ import annotations

import random
import re
import string
import time

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext

SYSTEM_PROMPT = (
    "Answer the question with exactly ONE answer. You may use the terminal. End with a final line "
    "'Answer: <your answer>'."
)
_ANSWER_LINE = re.compile(r"^\s*answer\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)

# (question, [[accepted spellings of answer 1], [answer 2], ...])
_DATA: list[tuple[str, list[list[str]]]] = [
    (
        "Name one noble gas.",
        [
            ["helium", "He"],
            ["neon", "Ne"],
            ["argon", "Ar"],
            ["krypton", "Kr"],
            ["xenon", "Xe"],
            ["radon", "Rn"],
        ],
    ),
    (
        "Name one of the Great Lakes of North America.",
        [
            ["Superior", "Lake Superior"],
            ["Michigan", "Lake Michigan"],
            ["Huron", "Lake Huron"],
            ["Erie", "Lake Erie"],
            ["Ontario", "Lake Ontario"],
        ],
    ),
    (
        "Name one planet of the solar system that has rings.",
        [["Jupiter"], ["Saturn"], ["Uranus"], ["Neptune"]],
    ),
    (
        "Name one country that borders Switzerland.",
        [["Germany"], ["France"], ["Italy"], ["Austria"], ["Liechtenstein"]],
    ),
    ("Name one prime number between 20 and 40.", [["23"], ["29"], ["31"], ["37"]]),
    ("Name one primary color of light in the RGB model.", [["red"], ["green"], ["blue"]]),
    ("Name one Scandinavian country.", [["Denmark"], ["Norway"], ["Sweden"]]),
    ("Name one programming language created at Bell Labs.", [["C"], ["C++", "cpp"], ["AWK"]]),
    (
        "Name one of the four fundamental forces of physics.",
        [
            ["gravity", "gravitation"],
            ["electromagnetism", "electromagnetic force"],
            ["strong force", "strong nuclear force", "strong interaction"],
            ["weak force", "weak nuclear force", "weak interaction"],
        ],
    ),
    ("Name one perfect number below 1000.", [["6"], ["28"], ["496"]]),
    (
        "Name one of the Platonic solids.",
        [["tetrahedron"], ["cube", "hexahedron"], ["octahedron"], ["dodecahedron"], ["icosahedron"]],
    ),
    ("Name one of the official languages of Canada.", [["English"], ["French"]]),
    (
        "Name one alkali metal.",
        [
            ["lithium", "Li"],
            ["sodium", "Na"],
            ["potassium", "K"],
            ["rubidium", "Rb"],
            ["caesium", "cesium", "Cs"],
            ["francium", "Fr"],
        ],
    ),
    (
        "Name one country whose territory lies on the equator in South America.",
        [["Ecuador"], ["Colombia"], ["Brazil"]],
    ),
    ("Name one square number between 50 and 150.", [["64"], ["81"], ["100"], ["121"], ["144"]]),
    ("Name one of the Baltic states.", [["Estonia"], ["Latvia"], ["Lithuania"]]),
    (
        "Name one HTTP method that is defined as idempotent.",
        [["GET"], ["PUT"], ["DELETE"], ["HEAD"], ["OPTIONS"], ["TRACE"]],
    ),
    ("Name one moon of Mars.", [["Phobos"], ["Deimos"]]),
    (
        "Name one continent that lies entirely in the Southern Hemisphere.",
        [["Antarctica"], ["Australia", "Oceania"]],
    ),
    ("Name one Fibonacci number between 30 and 150.", [["34"], ["55"], ["89"], ["144"]]),
    ("Name one country that uses the euro and borders Spain.", [["France"], ["Portugal"], ["Andorra"]]),
    (
        "Name one halogen element.",
        [["fluorine", "F"], ["chlorine", "Cl"], ["bromine", "Br"], ["iodine", "I"], ["astatine", "At"]],
    ),
    ("Name one of the three states of matter known in everyday life.", [["solid"], ["liquid"], ["gas"]]),
    (
        "Name one Unix shell.",
        [
            ["bash"],
            ["zsh"],
            ["sh", "bourne shell"],
            ["fish"],
            ["ksh", "korn shell"],
            ["tcsh"],
            ["csh", "c shell"],
            ["dash"],
        ],
    ),
    ("Name one two-digit number divisible by both 7 and 11.", [["77"]]),
    ("Name one power of two between 100 and 1100.", [["128"], ["256"], ["512"], ["1024"]]),
    (
        "Name one of the Nordic capital cities.",
        [["Oslo"], ["Stockholm"], ["Copenhagen"], ["Helsinki"], ["Reykjavik", "Reykjavík"]],
    ),
    (
        "Name one noble metal used in jewellery.",
        [["gold", "Au"], ["silver", "Ag"], ["platinum", "Pt"], ["palladium", "Pd"]],
    ),
    ("Name one ocean that borders Africa.", [["Atlantic", "Atlantic Ocean"], ["Indian", "Indian Ocean"]]),
    (
        "Name one of the terrestrial (rocky) planets of the solar system.",
        [["Mercury"], ["Venus"], ["Earth"], ["Mars"]],
    ),
]


def normalize(text: str) -> str:
    """Lower case, no surrounding punctuation or quotes, no leading article, single spaces."""
    text = text.strip().strip(string.punctuation.replace("+", "") + "\"'`*").lower()
    text = re.sub(r"^(the|a|an)\s+", "", text)
    return " ".join(text.split())


def _make_items() -> list[dict]:
    return [{"id": f"q{k}", "question": q, "answers": answers} for k, (q, answers) in enumerate(_DATA)]


class MultiAnswerEnv(HermesAgentBaseEnv):
    """Any one of several correct answers earns full credit; the answer line must hold exactly one."""

    name = "multi-answer"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["terminal"],
            max_agent_turns=4,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=100,
            steps_per_eval=25,
            max_token_length=2048,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="multi-answer",
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
        random.Random(99).shuffle(items)
        self._eval_items = items[:6]
        self._items = items[6:]
        self._index = 0
        self._recent: list[tuple[str, str, str, float]] = []
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return f"{item['question']} Give exactly one answer, on a final line 'Answer: <answer>'."

    @staticmethod
    def _answer_line(result: AgentResult) -> str | None:
        for msg in reversed(result.messages):
            if msg.get("role") == "assistant" and msg.get("content"):
                found = _ANSWER_LINE.findall(msg["content"])
                return found[-1] if found else None
        return None

    def _matches(self, item: dict, guess: str) -> bool:
        wanted = normalize(guess)
        return any(wanted == normalize(spelling) for answer in item["answers"] for spelling in answer)

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        guess = self._answer_line(result)
        score = 1.0 if guess is not None and self._matches(item, guess) else 0.0
        canonical = item["answers"][0][0]
        self._recent.append((item["question"], canonical, guess or "", score))
        self._recent = self._recent[-64:]
        return score

    async def evaluate(self, *args, **kwargs) -> None:
        start = time.time()
        tools, valid_names = self._resolve_tools_for_group()
        correct, samples = 0, []
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
            correct += score == 1.0
            samples.append(
                {"question": item["question"], "answer": self._answer_line(result), "score": score}
            )
        accuracy = correct / max(1, len(self._eval_items))
        self._eval_metrics.append(("eval/accuracy", accuracy))
        await self.evaluate_log(
            metrics={"eval/accuracy": accuracy},
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
    MultiAnswerEnv.cli()
