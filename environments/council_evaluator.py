"""Upstream-layout ``environments.council_evaluator``: a panel of LLM judges that scores an agent's output.

``CouncilEvaluator(model=...)`` asks several judge personas (in parallel) to rate the content, then an arbiter
that reads their opinions; the arbiter's confidence is the verdict's score, and a dissenting judge against the
arbiter gives a DPO pair. Judges are asked through the ENV'S OWN model server (``server=``, else the server of
the running :class:`HermesAgentBaseEnv`), so a council reward runs offline against the fake server like any other
model call; pass ``api_key`` and ``base_url`` to use a separate OpenAI-compatible endpoint instead.
"""

# No `from __future__ import annotations`: upstream's tests load this file with spec_from_file_location and
# exec_module, outside sys.modules, where dataclasses cannot resolve string annotations.

import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_COUNCIL_MODEL",
    "DEFAULT_PERSONAS",
    "CouncilEvaluator",
    "CouncilVerdict",
    "Persona",
    "PersonaResponse",
]

logger = logging.getLogger(__name__)

_ANSWER_FORMAT = (
    "End your answer with two lines: 'CONFIDENCE: <0-100>%' (how far the content meets the criteria) and "
    "'DISSENT: true' or 'DISSENT: false' (whether you disagree with the content's main claim)."
)


@dataclass(frozen=True)
class Persona:
    """One judge: its name and the system prompt that sets its point of view."""

    name: str
    system_prompt: str


@dataclass
class PersonaResponse:
    """What one judge said, with the confidence, dissent, key points and URLs read from its text."""

    persona_name: str
    content: str
    confidence: float = 0.5
    dissents: bool = False
    key_points: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


@dataclass
class CouncilVerdict:
    """The council's result: ``confidence_score`` (0-100, the arbiter's), every response and the DPO pairs."""

    question: str
    responses: dict[str, PersonaResponse]
    arbiter_synthesis: str
    confidence_score: int
    conflict_detected: bool = False
    dpo_pairs: list[dict[str, Any]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def _persona(name: str, view: str) -> Persona:
    return Persona(name, f"You are the {name} on a review council. {view} {_ANSWER_FORMAT}")


DEFAULT_PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        _persona("advocate", "Make the strongest fair case for the content and name what it gets right."),
        _persona("skeptic", "Look for unsupported claims, gaps in reasoning and missing counter-evidence."),
        _persona("oracle", "Judge factual accuracy and whether the evidence cited supports the claims."),
        _persona("contrarian", "Argue the most credible opposing position and test the content against it."),
        _persona(
            "arbiter",
            "Read the council's opinions, weigh them, and give the final judgement of the content.",
        ),
    )
}


DEFAULT_COUNCIL_MODEL = "nousresearch/hermes-3-llama-3.1-70b"
"""Upstream's default judge model name; it is sent only to a separate endpoint (``api_key=`` and ``base_url=``)."""


class CouncilEvaluator:
    """A panel of judge personas plus an arbiter; ``await evaluate(content, question, criteria)``."""

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        personas: list[str] | None = None,
        *,
        server: Any = None,
        temperature: float = 0.7,
        max_tokens: int = 2000,
    ) -> None:
        self.model = model or DEFAULT_COUNCIL_MODEL
        self._api_key = api_key
        self._base_url = base_url
        self._server = server
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._client: Any = None
        chosen = [p.lower() for p in personas] if personas else list(DEFAULT_PERSONAS)
        self._personas = {n: DEFAULT_PERSONAS[n] for n in chosen if n in DEFAULT_PERSONAS}

    # ------------------------------------------------------------------ model calls
    def _target(self) -> Any:
        """The server judges are asked through (explicit, else the current env's), or None."""
        if self._server is not None:
            return self._server
        from hermes_envs.env import current_env

        env = current_env()
        return getattr(env, "server", None) if env is not None else None

    async def _llm_call(self, system_prompt: str, user_message: str) -> str:
        """One judge's answer text; an ``[Error: ...]`` text when the call fails (the judge then counts as 50%)."""
        messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_message}]
        try:
            if self._api_key and self._base_url:
                if self._client is None:
                    from openai import AsyncOpenAI

                    self._client = AsyncOpenAI(api_key=self._api_key, base_url=self._base_url)
                response = await self._client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                )
            else:
                server = self._target()
                if server is None:
                    return "[Error: no model server for the council: pass server= or run inside an env]"
                response = await server.chat_completion(
                    messages=messages, n=1, temperature=self.temperature, max_tokens=self.max_tokens
                )
            return (response.choices[0].message.content or "") if response.choices else ""
        except Exception as exc:  # one failed judge must not fail the reward
            logger.error("council judge call failed: %s", exc)
            return f"[Error: {type(exc).__name__}: {exc}]"

    # ------------------------------------------------------------------ evaluation
    async def evaluate(
        self, content: str, question: str | None = None, criteria: list[str] | None = None
    ) -> CouncilVerdict:
        """Ask the judges in parallel, then the arbiter with their opinions; the verdict."""
        criteria = criteria or ["accuracy", "depth", "evidence", "falsifiability"]
        prompt = f"Evaluate this content against: {', '.join(criteria)}.\n\n"
        if question:
            prompt += f"Original task: {question}\n\n"
        prompt += f"Content:\n{content[:4000]}"
        arbiter = self._personas.get("arbiter", DEFAULT_PERSONAS["arbiter"])
        judges = [p for n, p in self._personas.items() if n != "arbiter"]

        async def ask(persona: Persona) -> PersonaResponse:
            return self._parse_response(persona.name, await self._llm_call(persona.system_prompt, prompt))

        responses = {r.persona_name: r for r in await asyncio.gather(*(ask(p) for p in judges))}
        confidences = [r.confidence for r in responses.values()]
        conflict = len(confidences) >= 2 and max(confidences) - min(confidences) > 0.3
        briefing = (
            prompt
            + "\n\n=== COUNCIL OPINIONS ===\n\n"
            + "".join(
                f"--- {name.upper()} ({r.confidence:.0%}) ---\n{r.content}\n\n"
                for name, r in responses.items()
            )
        )
        synthesis = await self._llm_call(arbiter.system_prompt, briefing)
        responses["arbiter"] = self._parse_response("arbiter", synthesis)
        sources = sorted({s for r in responses.values() for s in r.sources})
        return CouncilVerdict(
            question=question or prompt,
            responses=responses,
            arbiter_synthesis=synthesis,
            confidence_score=int(round(responses["arbiter"].confidence * 100)),
            conflict_detected=conflict,
            dpo_pairs=self.extract_dpo_pairs_from_responses(prompt, responses),
            sources=sources,
        )

    async def gate(self, action: str, context: str | None = None) -> dict[str, Any]:
        """A quick safety review by the skeptic, the oracle and the arbiter: ``{allowed, confidence, reasoning}``."""
        question = f"SAFETY REVIEW\nAction: {action}"
        if context:
            question += f"\nContext: {context}"
        question += "\nShould this action be allowed? Consider risks and reversibility."
        saved = self._personas
        self._personas = {k: v for k, v in saved.items() if k in ("skeptic", "oracle", "arbiter")}
        try:
            verdict = await self.evaluate(question)
        finally:
            self._personas = saved
        return {
            "allowed": verdict.confidence_score >= 50,
            "confidence": verdict.confidence_score,
            "reasoning": verdict.arbiter_synthesis[:1000],
        }

    def extract_dpo_pairs(self, verdict: CouncilVerdict) -> list[dict[str, Any]]:
        """DPO pairs of a verdict (the arbiter chosen over the least confident dissenter)."""
        return self.extract_dpo_pairs_from_responses(verdict.question, verdict.responses)

    @staticmethod
    def extract_dpo_pairs_from_responses(
        question: str, responses: dict[str, PersonaResponse]
    ) -> list[dict[str, Any]]:
        """``[{question, chosen, rejected, confidence, source}]``: empty without an arbiter or a dissenter."""
        arbiter = responses.get("arbiter")
        dissenters = sorted(
            (r for n, r in responses.items() if n != "arbiter" and r.content and r.dissents),
            key=lambda r: r.confidence,
        )
        if arbiter is None or not dissenters:
            return []
        return [
            {
                "question": question,
                "chosen": arbiter.content,
                "rejected": dissenters[0].content,
                "confidence": arbiter.confidence,
                "source": "council_evaluation",
            }
        ]

    def normalized_reward(self, verdict: CouncilVerdict) -> float:
        """The verdict's score as a reward in [0, 1]."""
        return max(0.0, min(1.0, verdict.confidence_score / 100.0))

    @staticmethod
    def _parse_response(persona_name: str, raw_text: str) -> PersonaResponse:
        """Read confidence (``CONFIDENCE: 0.8`` / ``80%``), dissent, bullet points and URLs from a judge's text."""
        confidence = 0.5
        for pattern in (r"CONFIDENCE:\s*([\d.]+)\s*%?", r"(\d+(?:\.\d+)?)\s*%"):
            match = re.search(pattern, raw_text, re.IGNORECASE)
            if match:
                try:
                    value = float(match.group(1))
                except ValueError:
                    continue
                confidence = max(0.0, min(1.0, value / 100.0 if value > 1.0 else value))
                break
        dissent = re.search(r"DISSENT:\s*(true|false)", raw_text, re.IGNORECASE)
        points = [
            line.strip().lstrip("-* ").strip()
            for line in raw_text.splitlines()
            if line.strip().startswith(("- ", "* ")) and len(line.strip()) > 12
        ][:10]
        sources = sorted(set(re.findall(r"https?://[^\s)\]\"'<>]+", raw_text)))
        return PersonaResponse(
            persona_name=persona_name,
            content=raw_text,
            confidence=confidence,
            dissents=bool(dissent and dissent.group(1).lower() == "true"),
            key_points=points,
            sources=sources,
        )
