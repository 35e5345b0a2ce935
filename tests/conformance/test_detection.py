"""Detection that generalises (issue 18): one cause gives one finding, ignoring a check does not gate the checks
built on it, findings name the real cause, and the new probes (schemas, renderings, hash order) behave."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._golds import derivable, gold_positives
from hermes_envs.conformance._observations.scoring import wrong_value
from hermes_envs.conformance.checks.answers import renderings
from hermes_envs.conformance.checks.schemas import schema_problems

from .corpus import BAD, CORPUS_SETTINGS, GOOD, outcomes

BY_NAME = {p.name: p for p in BAD + GOOD}


def _status(path: Path) -> dict[str, object]:
    return {o.check_id: o for o in outcomes(path)}


def test_an_unknown_toolset_gives_one_finding_and_the_checks_it_blocks_say_so() -> None:
    found = _status(BY_NAME["unknown_toolset.py"])
    failed = [o for o in found.values() if o.status is Status.FAILED]
    assert [o.check_id for o in failed] == ["HC802"] and len(failed[0].findings) == 1
    assert "honcho" in failed[0].findings[0].message
    for check_id in ("HC401", "HC501", "HC202"):
        assert found[check_id].status is Status.SKIPPED, check_id
        assert found[check_id].note.startswith("needs the env's tools"), found[check_id].note


def test_an_init_config_error_is_not_blamed_on_setup_or_the_parser() -> None:
    found = _status(BY_NAME["init_raises_config_error.py"])
    assert found["HC109"].status is Status.FAILED
    assert "__init__ raised ConfigError" in found["HC109"].findings[0].message
    for check_id in ("HC201", "HC801", "HC501"):
        assert found[check_id].status is Status.SKIPPED, check_id
        assert "HC109" in found[check_id].note


def test_an_empty_evaluate_names_the_exception_it_swallowed() -> None:
    (finding,) = _status(BY_NAME["eval_swallows_error.py"])["HC202"].findings
    assert "AttributeError" in finding.message and "rollout_server_manager" in finding.message
    assert "eval split is empty" not in finding.message


@pytest.mark.slow
def test_ignoring_hc401_from_the_command_line_does_not_make_a_raising_reward_green() -> None:
    settings = Settings(**CORPUS_SETTINGS, ignore=["HC401"])
    with EnvSession(BY_NAME["reward_dict_access.py"], settings=settings) as session:
        outcome = session.run("HC402")
    assert outcome.status is Status.FAILED
    assert "ContractViolation" in outcome.findings[0].message


def test_hc101_names_a_module_hermes_envs_does_not_ship(tmp_path: Path) -> None:
    env = tmp_path / "needs_upstream_env.py"
    env.write_text("from environments.web_research_env import WebResearchEnv\n")  # upstream's, not shipped
    with EnvSession(env, settings=Settings(select=["HC101"])) as session:
        (finding,) = session.run("HC101").findings
    assert "hermes-envs does not provide yet: a gap of the kit" in finding.message
    assert "environments.web_research_env" in finding.message
    assert "pip install hermes-envs" not in finding.fix and "report the missing module" in finding.fix


def test_hc101_names_a_missing_module_upstream_lacks_too_as_the_authors_own(tmp_path: Path) -> None:
    env = tmp_path / "needs_own_env.py"
    env.write_text("from environments.definitely_not_shipped import Thing\n")
    with EnvSession(env, settings=Settings(select=["HC101"])) as session:
        (finding,) = session.run("HC101").findings
    assert "it is your own module" in finding.message and "gap of the kit" not in finding.message
    assert "create environments/definitely_not_shipped.py" in finding.fix


def test_hc407_is_not_applicable_when_no_gold_can_be_derived() -> None:
    outcome = _status(BY_NAME["code_run_env.py"])["HC407"]
    assert outcome.status is Status.NOT_APPLICABLE
    assert "conformance_transcripts" in outcome.note


def test_the_fuzz_finding_names_its_seed_and_a_small_counterexample() -> None:
    (finding,) = _status(BY_NAME["reward_credits_filler.py"])["HC412"].findings
    assert "hypothesis seed 0" in finding.message
    assert "'step'" in finding.message and "no '" in finding.message


@pytest.mark.parametrize(
    ("parameters", "needle"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}, "['b']"),
        ({"type": "array", "items": {"type": "string"}}, "object schema"),
        ({"type": "object", "properties": {"a": {"type": "str"}}}, "not valid JSON Schema"),
    ],
)
def test_invalid_tool_schemas_are_named(parameters: dict, needle: str) -> None:
    problems = schema_problems({"type": "function", "function": {"name": "t", "parameters": parameters}})
    assert any(needle in p for p in problems), problems


def test_a_valid_tool_schema_has_no_problem() -> None:
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    assert (
        schema_problems({"type": "function", "function": {"name": "read_file", "parameters": parameters}})
        == []
    )


def test_renderings_cover_the_usual_spellings_of_a_gold() -> None:
    assert ("with thousands separators", "35,736", True) in renderings("35736")
    # A number that could be a year (1000-2100) is only a warning: "1,989" is not how a year is written.
    assert ("with thousands separators", "1,189", False) in renderings("1189")
    assert ("as an integer", "5000", True) in renderings("5000.0")
    assert {text for _w, text, _s in renderings("Paris")} >= {"paris", "PARIS", "**Paris**"}
    assert ("as a decimal", "0.75", False) in renderings("3/4")


def test_golds_are_derived_for_structured_file_and_command_tasks() -> None:
    tools = [
        {"function": {"name": "write_file", "parameters": {"properties": {"path": {}, "content": {}}}}},
        {
            "function": {
                "name": "terminal",
                "parameters": {"properties": {"command": {}}, "required": ["command"]},
            }
        },
    ]
    names = [p.name for p in gold_positives({"filename": "notes/a.txt", "text": "hi"}, tools)]
    assert any("writing field 'text' to the path in field 'filename'" in n for n in names)
    names = [p.name for p in gold_positives({"goal": "x", "solution": "mkdir -p b && touch b/ok"}, tools)]
    assert any("running field 'solution' as a command" in n for n in names)
    kinds = {p.kind for p in gold_positives({"fields": {"a": 1}, "items": [1, 2]}, [])}
    assert {"dict", "list"} <= kinds
    assert derivable({"expected": {"a": 1}}) and not derivable({"task": "write code", "tests": "a\nb"})


def test_a_number_whose_item_names_its_unit_is_also_answered_with_the_unit() -> None:
    """A quantity task ({"value": 12.5, "unit": "km"}) is graded on "12.5 km": the number alone is not its answer."""
    item = {"question": "How far?", "value": 12.5, "unit": "km"}
    answers = {p.value: p for p in gold_positives(item, []) if p.template == "Answer: {v}"}
    assert "12.5 km" in answers and "12.5" in answers
    assert answers["12.5 km"].field == "value unit"
    wrong = wrong_value("12.5 km", "value unit", item, [item, {"value": 3.0, "unit": "m"}])
    assert wrong == "3.0 km"  # another item's number, in this item's unit
    assert not any(p.field == "question unit" for p in gold_positives(item, []))  # a text has no unit


@pytest.mark.slow
def test_the_hash_seed_workers_score_in_other_interpreters(tmp_path: Path) -> None:
    from hermes_envs.conformance import _hashseed as hashseed

    case = {
        "item": {"question": "List the vowels in order.", "items": ["a", "e", "i", "o", "u"]},
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": '["a","e","i","o","u"]'},
        ],
    }
    path = BY_NAME["set_order_list.py"]
    scores = hashseed.collect(hashseed.start_workers(path, "ListEnv", [case], tmp_path))
    assert sorted(scores) == list(hashseed.SEEDS)
    assert all(isinstance(v[0], float) for v in scores.values())


def test_a_check_id_taken_twice_is_refused_by_the_shared_registry() -> None:
    from hermes_envs.conformance import CHECK_REGISTRY, CHECKS, check
    from hermes_envs.conformance._registry import CheckIdError

    before = len(CHECKS)
    with CHECK_REGISTRY.isolated():
        check("HC999", "scratch", "a scratch check", why="a reason.", fix="a fix.")(lambda s: [])
        assert "HC999" in CHECKS
        with pytest.raises(CheckIdError, match="HC101"):
            check("HC101", "again", "a second owner", why="a reason.", fix="a fix.")(lambda s: [])
    assert len(CHECKS) == before and "HC999" not in CHECKS
