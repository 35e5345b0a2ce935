"""The ``council`` toolset (``council_query``, ``council_evaluate``, ``council_gate``): a panel of judge personas.

Upstream env files enable ``"council"`` (its ouroboros env does). Upstream asks an OpenRouter-style endpoint named
by API-key variables and hides the tools when no key is set; here every persona is asked through the env's model
server (the fake one under tests), so the tools work offline. Four deliberators (advocate, skeptic, oracle,
contrarian) answer in turn, then the arbiter reads their opinions; the arbiter's ``CONFIDENCE`` is the verdict's
score (0-100). Results are JSON text shaped as upstream's (``success``, ``confidence_score``, ...).
"""

from __future__ import annotations

import re
from typing import Any

from ..registry import ToolRegistry
from ._limits import timeout_for
from ._tooling import register_family, schema
from .model import chat

__all__ = ["PERSONAS", "register_council_tools"]

_FORMAT = (
    " End with two lines: 'CONFIDENCE: <0-100>%' (how well the subject holds up) and 'DISSENT: true' or "
    "'DISSENT: false' (whether you disagree with its main claim)."
)
#: name -> system prompt of each persona (the arbiter last: it reads the others).
PERSONAS: dict[str, str] = {
    "advocate": "You are the advocate on a review council: make the strongest fair case for the subject.",
    "skeptic": "You are the skeptic on a review council: find unsupported claims and missing counter-evidence.",
    "oracle": "You are the oracle on a review council: judge factual accuracy and whether evidence supports it.",
    "contrarian": "You are the contrarian on a review council: argue the most credible opposing position.",
    "arbiter": "You are the arbiter of a review council: weigh the council's opinions and give the final judgement.",
}
_URL = re.compile(r"https?://[^\s)\]\"'<>]+")


def _opinion(name: str, text: str) -> dict[str, Any]:
    """What one persona said, with the confidence (0-1), dissent, bullet points and URLs read from its text."""
    confidence = 0.5
    match = re.search(r"CONFIDENCE:\s*([\d.]+)", text, re.IGNORECASE) or re.search(
        r"(\d+(?:\.\d+)?)\s*%", text
    )
    if match:
        try:
            value = float(match.group(1))
            confidence = max(0.0, min(1.0, value / 100.0 if value > 1.0 else value))
        except ValueError:
            pass
    dissent = re.search(r"DISSENT:\s*(true|false)", text, re.IGNORECASE)
    points = [
        line.strip().lstrip("-* ").strip()
        for line in text.splitlines()
        if line.strip().startswith(("- ", "* ")) and len(line.strip()) > 12
    ][:10]
    return {
        "persona": name,
        "content": text,
        "confidence": confidence,
        "dissents": bool(dissent and dissent.group(1).lower() == "true"),
        "key_points": points,
        "sources": sorted(set(_URL.findall(text))),
    }


def _ask(system: str, user: str) -> str:
    reply = chat(
        "council",
        [{"role": "system", "content": system + _FORMAT}, {"role": "user", "content": user}],
        timeout=timeout_for("council"),
        temperature=0.7,
        max_tokens=2000,
    )
    return (reply.get("content") or "").strip()


def run_council(question: str, personas: list[str] | None = None) -> dict[str, Any]:
    """Ask the chosen deliberators, then the arbiter; ``{responses, arbiter_synthesis, confidence_score, ...}``."""
    chosen = [p.lower() for p in personas or PERSONAS if p.lower() in PERSONAS]
    responses = {n: _opinion(n, _ask(PERSONAS[n], question)) for n in chosen if n != "arbiter"}
    confidences = [r["confidence"] for r in responses.values()]
    briefing = (
        question
        + "\n\n=== COUNCIL OPINIONS ===\n\n"
        + "".join(
            f"--- {n.upper()} ({r['confidence']:.0%}) ---\n{r['content']}\n\n" for n, r in responses.items()
        )
    )
    synthesis = _ask(PERSONAS["arbiter"], briefing)
    responses["arbiter"] = arbiter = _opinion("arbiter", synthesis)
    dissenters = sorted(
        (r for n, r in responses.items() if n != "arbiter" and r["dissents"]), key=lambda r: r["confidence"]
    )
    pairs = (
        [
            {
                "question": question,
                "chosen": synthesis,
                "rejected": dissenters[0]["content"],
                "confidence": arbiter["confidence"],
                "source": "council_evaluation",
                "chosen_persona": "arbiter",
                "rejected_persona": dissenters[0]["persona"],
            }
        ]
        if dissenters
        else []
    )
    return {
        "responses": responses,
        "arbiter_synthesis": synthesis,
        "confidence_score": int(round(arbiter["confidence"] * 100)),
        "conflict_detected": len(confidences) >= 2 and max(confidences) - min(confidences) > 0.3,
        "dpo_pairs": pairs,
        "sources": sorted({s for r in responses.values() for s in r["sources"]}),
    }


def _feedback(verdict: dict[str, Any], limit: int) -> dict[str, Any]:
    return {
        n: {
            k: (r[k][:limit] if k == "content" else r[k])
            for k in ("confidence", "dissents", "key_points", "content")
        }
        | {"sources": r["sources"]}
        for n, r in verdict["responses"].items()
    }


def council_query(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    question = str(args.get("question") or "").strip()
    if not question:
        return {"error": "question is required"}
    prompt = f"Question: {question}"
    if args.get("context"):
        prompt += f"\n\nContext:\n{args['context']}"
    if args.get("evidence_search", True):
        prompt += "\n\nCite supporting evidence or counter-evidence where you can."
    verdict = run_council(prompt, args.get("personas"))
    return {
        "success": True,
        "question": question,
        "confidence_score": verdict["confidence_score"],
        "conflict_detected": verdict["conflict_detected"],
        "arbiter_synthesis": verdict["arbiter_synthesis"],
        "persona_responses": _feedback(verdict, 2000),
        "dpo_pairs": verdict["dpo_pairs"],
        "sources": verdict["sources"],
        "available_personas": list(PERSONAS),
    }


def council_evaluate(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    content = str(args.get("content") or "")
    if not content:
        return {"error": "content is required"}
    criteria = list(args.get("criteria") or ["accuracy", "depth", "falsifiability", "evidence"])
    question = args.get("question") or "Evaluate the quality of this content"
    verdict = run_council(
        f"Evaluate the content against these criteria: {', '.join(criteria)}.\n\n"
        f"Original question/task: {question}\n\nContent to evaluate:\n{content[:4000]}"
    )
    return {
        "success": True,
        "confidence_score": verdict["confidence_score"],
        "conflict_detected": verdict["conflict_detected"],
        "criteria": criteria,
        "arbiter_synthesis": verdict["arbiter_synthesis"],
        "persona_feedback": _feedback(verdict, 1500),
        "dpo_pairs": verdict["dpo_pairs"],
        "sources": verdict["sources"],
    }


_THRESHOLDS = {"low": 30, "medium": 50, "high": 70}


def council_gate(args: dict[str, Any], task_id: str) -> dict[str, Any]:
    action = str(args.get("action") or "").strip()
    if not action:
        return {"error": "action is required"}
    risk: str = args["risk_level"] if args.get("risk_level") in _THRESHOLDS else "medium"
    question = f"SAFETY REVIEW (risk level: {risk})\nProposed action: {action}\n"
    if args.get("context"):
        question += f"Context: {args['context']}\n"
    question += "\nShould this action be allowed? Consider risks, reversibility and bad outcomes. Be concise."
    verdict = run_council(question, ["skeptic", "oracle", "arbiter"])
    return {
        "success": True,
        "allowed": verdict["confidence_score"] >= _THRESHOLDS[risk],
        "confidence": verdict["confidence_score"],
        "risk_level": risk,
        "threshold": _THRESHOLDS[risk],
        "reasoning": verdict["arbiter_synthesis"][:1000],
        "skeptic_concerns": verdict["responses"].get("skeptic", {}).get("key_points", []),
    }


_TEXT = {"type": "string"}
_LIST = {"type": "array", "items": {"type": "string"}}
TOOLS = [
    (
        "council_query",
        "Submit a question to the adversarial council for multi-perspective deliberation. Five personas "
        "(Advocate, Skeptic, Oracle, Contrarian, Arbiter) debate the question. Returns a structured verdict with a "
        "confidence score and evidence links.",
        schema(
            {
                "question": {**_TEXT, "description": "The question to deliberate on"},
                "context": {
                    **_TEXT,
                    "description": "Optional context or prior research to inform the debate",
                },
                "personas": {**_LIST, "description": "Optional persona names to include (default: all 5)"},
                "evidence_search": {
                    "type": "boolean",
                    "description": "Ask personas to cite evidence (default true)",
                },
            },
            ["question"],
        ),
        council_query,
    ),
    (
        "council_evaluate",
        "Evaluate any content through the adversarial council: research, analysis or agent output. Returns a "
        "confidence score (0-100) and structured feedback.",
        schema(
            {
                "content": {**_TEXT, "description": "The content to evaluate"},
                "question": {**_TEXT, "description": "The original question/task the content addresses"},
                "criteria": {
                    **_LIST,
                    "description": "Criteria (default: accuracy, depth, falsifiability, evidence)",
                },
            },
            ["content"],
        ),
        council_evaluate,
    ),
    (
        "council_gate",
        "Safety gate: a quick council review (Skeptic, Oracle, Arbiter) before a high-stakes action such as "
        "deploying code or an irreversible change. Returns allow/deny with reasoning.",
        schema(
            {
                "action": {**_TEXT, "description": "Description of the action to review"},
                "risk_level": {
                    "type": "string",
                    "enum": ["low", "medium", "high"],
                    "description": "Default medium",
                },
                "context": {**_TEXT, "description": "Why this action is being taken"},
            },
            ["action"],
        ),
        council_gate,
    ),
]


def register_council_tools(target: ToolRegistry) -> None:
    register_family(target, "council", "council", TOOLS)
