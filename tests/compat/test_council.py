"""CouncilEvaluator: judges in parallel, an arbiter that reads them, verdicts, DPO pairs and the safety gate."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from environments.council_evaluator import CouncilEvaluator, PersonaResponse


class JudgeServer:
    """Answers each persona (recognised by its system prompt) with a scripted text; records the calls."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.calls: list[dict[str, Any]] = []

    async def chat_completion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        system = kwargs["messages"][0]["content"]
        name = next(n for n in self.answers if f"the {n} " in system)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=self.answers[name]))])


ANSWERS = {
    "advocate": "- strong evidence base overall\nCONFIDENCE: 90%\nDISSENT: false",
    "skeptic": "- claims lack sources https://example.org/a\nCONFIDENCE: 20%\nDISSENT: true",
    "oracle": "facts check out. CONFIDENCE: 0.7 DISSENT: false",
    "contrarian": "CONFIDENCE: 40%\nDISSENT: true",
    "arbiter": "On balance sound. CONFIDENCE: 65%",
}


async def test_the_arbiter_scores_and_the_weakest_dissenter_is_the_rejected_answer() -> None:
    server = JudgeServer(ANSWERS)
    council = CouncilEvaluator(server=server)
    verdict = await council.evaluate("Bridges expand in heat.", question="Why joints?", criteria=["accuracy"])
    assert verdict.confidence_score == 65 and council.normalized_reward(verdict) == 0.65
    assert verdict.conflict_detected  # 90% against 20%
    assert set(verdict.responses) == {"advocate", "skeptic", "oracle", "contrarian", "arbiter"}
    assert verdict.responses["oracle"].confidence == 0.7
    assert verdict.sources == ["https://example.org/a"]
    [pair] = council.extract_dpo_pairs(verdict)
    assert pair["chosen"] == ANSWERS["arbiter"] and pair["rejected"] == ANSWERS["skeptic"]
    arbiter_prompt = server.calls[-1]["messages"][1]["content"]
    assert "SKEPTIC (20%)" in arbiter_prompt and "Original task: Why joints?" in arbiter_prompt


async def test_the_gate_asks_only_skeptic_oracle_and_arbiter() -> None:
    server = JudgeServer(ANSWERS)
    council = CouncilEvaluator(server=server)
    decision = await council.gate("rm -rf build/", context="clean the build")
    assert decision == {"allowed": True, "confidence": 65, "reasoning": ANSWERS["arbiter"]}
    assert len(server.calls) == 3
    assert len(council._personas) == 5  # the full council is back afterwards


async def test_a_failing_judge_counts_as_undecided_and_the_verdict_still_comes() -> None:
    class Down:
        async def chat_completion(self, **kwargs: Any) -> Any:
            raise ConnectionError("server down")

    verdict = await CouncilEvaluator(server=Down(), personas=["skeptic", "arbiter"]).evaluate("x")
    assert verdict.confidence_score == 50
    assert verdict.arbiter_synthesis.startswith("[Error: ConnectionError")


def test_parse_response_reads_percent_and_fraction_forms() -> None:
    parse = CouncilEvaluator._parse_response
    assert parse("a", "I'd say 85% sure").confidence == 0.85
    assert parse("a", "CONFIDENCE: 0.3").confidence == 0.3
    assert parse("a", "no number").confidence == 0.5
    response = parse("a", "- this point is long enough\n* and so is this one\nDISSENT: TRUE")
    assert isinstance(response, PersonaResponse) and response.dissents
    assert response.key_points == ["this point is long enough", "and so is this one"]


def test_the_module_loads_from_its_file_outside_sys_modules() -> None:
    # how upstream's own tests load it: spec_from_file_location + exec_module, never registered in sys.modules
    import importlib.util
    import sys
    from pathlib import Path

    import environments

    path = Path(environments.__file__).with_name("council_evaluator.py")
    spec = importlib.util.spec_from_file_location("council_evaluator_by_path", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "council_evaluator_by_path" not in sys.modules
    verdict = module.CouncilVerdict(question="q", responses={}, arbiter_synthesis="s", confidence_score=50)
    assert verdict.dpo_pairs == [] and module.PersonaResponse.__dataclass_fields__


def test_tools_council_personas_serves_the_councils_data_classes() -> None:
    import environments.council_evaluator as council

    # isort: split
    from tools.council_personas import DEFAULT_PERSONAS, CouncilVerdict, PersonaResponse

    assert CouncilVerdict is council.CouncilVerdict and PersonaResponse is council.PersonaResponse
    assert "arbiter" in DEFAULT_PERSONAS


def test_the_default_judge_model_is_upstreams_and_is_not_sent_to_the_envs_own_server() -> None:
    """``model`` reads as upstream's default judge model; through the env's own server no model name is forced."""
    import asyncio

    server = JudgeServer(ANSWERS)
    council = CouncilEvaluator(server=server)
    assert council.model == "nousresearch/hermes-3-llama-3.1-70b"
    assert CouncilEvaluator(model="custom/judge").model == "custom/judge"
    asyncio.run(council.evaluate("Water boils at 100 C at sea level."))
    assert server.calls and all("model" not in call for call in server.calls)
