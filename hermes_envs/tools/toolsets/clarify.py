"""The ``clarify`` toolset (``clarify``): the agent asks the user a question, open or with up to 4 choices.

There is no human in an RL rollout, so someone must answer. Backends: ``fake`` (deterministic: the text of
``HERMES_CLARIFY_ANSWER``, else the first choice, else a fixed "proceed with your best judgement"), and ``model``
(the env's model server plays the user; the auto default). Result as upstream:
``{"question", "choices_offered", "user_response"}``.
"""

from __future__ import annotations

import os
from typing import Any

from ..registry import ToolRegistry
from ._backends import FAKE, slot
from ._limits import timeout_for
from ._tooling import register_family, schema

__all__ = ["NO_ANSWER", "register_clarify_tools"]

NO_ANSWER = "No clarification is available; proceed with your best judgement."


class FakeClarify:
    name = FAKE

    def answer(self, question: str, choices: list[str]) -> str:
        return os.environ.get("HERMES_CLARIFY_ANSWER") or (choices[0] if choices else NO_ANSWER)


class ModelClarify:
    name = "model"

    def answer(self, question: str, choices: list[str]) -> str:
        from .model import chat

        options = "\n".join(f"{i}. {c}" for i, c in enumerate(choices, 1))
        prompt = f"The assistant asks you: {question}" + (f"\nChoices:\n{options}" if choices else "")
        reply = chat(
            "clarify",
            [
                {"role": "system", "content": "You are the user the assistant works for. Answer briefly."},
                {"role": "user", "content": prompt},
            ],
            timeout=timeout_for("clarify"),
        )
        return (reply.get("content") or "").strip() or NO_ANSWER


CLARIFY = slot("clarify", lambda: "model")
CLARIFY.register(FAKE, FakeClarify)
CLARIFY.register("model", ModelClarify)


def clarify(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    question = str(args.get("question", "")).strip()
    if not question:
        return {"error": "Question text is required."}
    raw = args.get("choices") or []
    choices = [str(c).strip() for c in raw if str(c).strip()][:4] if isinstance(raw, list) else []
    return {
        "question": question,
        "choices_offered": choices or None,
        "user_response": CLARIFY.get().answer(question, choices),
    }


DESCRIPTION = (
    "Ask the user a question when you need clarification, feedback, or a decision before proceeding. Supports "
    "multiple choice (up to 4 choices) or open-ended questions."
)
PARAMS = schema(
    {
        "question": {"type": "string", "description": "The question to present to the user."},
        "choices": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": 4,
            "description": "Up to 4 answer choices. Omit this parameter entirely to ask an open-ended question.",
        },
    },
    ["question"],
)


def register_clarify_tools(target: ToolRegistry) -> None:
    register_family(target, "clarify", "clarify", [("clarify", DESCRIPTION, PARAMS, clarify)])
