"""The ``moa`` toolset (``mixture_of_agents``): several reference answers, then one aggregated answer.

Upstream asks several frontier models; here every call goes to the env's model server (the fake one under tests):
``REFERENCE_COUNT`` reference answers at rising temperatures, then an aggregation at temperature 0. Result as
upstream: ``{"success": true, "response": str, "models_used": [...]}``.
"""

from __future__ import annotations

from typing import Any

from ..registry import ToolRegistry
from ._limits import timeout_for
from ._tooling import register_family, schema
from .model import chat, model_endpoint

__all__ = ["REFERENCE_COUNT", "register_moa_tools"]

REFERENCE_COUNT = 3


def mixture_of_agents(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    prompt = str(args.get("user_prompt", "")).strip()
    if not prompt:
        return {"success": False, "error": "mixture_of_agents needs a 'user_prompt'."}
    timeout = timeout_for("moa")
    references = []
    for i in range(REFERENCE_COUNT):
        reply = chat(
            "mixture_of_agents",
            [{"role": "user", "content": prompt}],
            timeout=timeout,
            temperature=0.6 + 0.2 * i,
        )
        references.append((reply.get("content") or "").strip())
    numbered = "\n\n".join(f"{i}. {r}" for i, r in enumerate(references, 1))
    system = (
        "You have been provided with a set of responses to the latest user query. Synthesize them into a single, "
        "high-quality, accurate response; critically evaluate them, as some may be wrong.\n\nResponses:\n"
        + numbered
    )
    final = chat(
        "mixture_of_agents",
        [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
        timeout=timeout,
    )
    model = model_endpoint("mixture_of_agents").model
    return {
        "success": True,
        "response": (final.get("content") or "").strip(),
        "models_used": {"reference_models": [model] * REFERENCE_COUNT, "aggregator_model": model},
    }


DESCRIPTION = (
    "Route a hard problem through multiple frontier LLMs collaboratively. Makes several reference calls and an "
    "aggregation call -- use sparingly for genuinely difficult problems. Best for: complex math, advanced "
    "algorithms, multi-step analytical reasoning, problems benefiting from diverse perspectives."
)
PARAMS = schema(
    {
        "user_prompt": {
            "type": "string",
            "description": "The complex query or problem to solve using multiple AI models. Should be a challenging "
            "problem that benefits from diverse perspectives and collaborative reasoning.",
        }
    },
    ["user_prompt"],
)


def register_moa_tools(target: ToolRegistry) -> None:
    register_family(target, "moa", "moa", [("mixture_of_agents", DESCRIPTION, PARAMS, mixture_of_agents)])
