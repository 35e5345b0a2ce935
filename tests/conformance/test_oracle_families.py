"""The faults, parity and data oracles (issue 29): each catches its mutant in conformance/bad/ (the corpus and
message snapshots prove that) and passes on the correct twin the mutant was made from; the false alarm met while
building them (an eval-only benchmark whose training and eval items are the same) has a test that failed before."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance.checks.faults import _comparable

from .corpus import BAD, CORPUS_SETTINGS, GOOD, THOROUGH, outcomes

BY_NAME = {p.name: p for p in BAD + GOOD}


def _run(name: str, check_ids: list[str], thorough: bool = False) -> dict[str, object]:
    """The outcomes of ``check_ids`` on the corpus env ``name``. Without ``thorough`` they are read from the corpus
    run every corpus test shares (same settings; a check's outcome does not depend on which others ran, see
    test_observations.py): a session of its own here would repeat that run's work."""
    if not thorough and name not in THOROUGH:
        found = {o.check_id: o for o in outcomes(BY_NAME[name])}
        return {i: found[i] for i in check_ids}
    settings = Settings(**CORPUS_SETTINGS, thorough=thorough)
    with EnvSession(BY_NAME[name], settings=settings) as session:
        return {i: session.run(i) for i in check_ids}


def test_a_run_report_leaves_out_timings_and_treats_nan_as_itself() -> None:
    """Two evaluate() runs are compared without their own timings (they always differ) and NaN == NaN (an empty
    mean is NaN in both runs): otherwise HC708 could never see two identical reports."""
    one = {"eval/accuracy": 0.0, "eval/seconds": 1.5, "eval/mean": math.nan, "eval/latency_ms": 3}
    two = {"eval/accuracy": 0.0, "eval/seconds": 9.0, "eval/mean": math.nan, "eval/latency_ms": 7}
    assert _comparable(one) == _comparable(two)
    assert _comparable({**one, "eval/api_errors": 4}) != _comparable(two)


@pytest.mark.parametrize("name", ["raw_atropos_env.py", "exact_answer_env.py"])
def test_a_group_under_server_errors_is_raised_or_dropped_by_correct_envs(name: str) -> None:
    """HC505's twins: the raw env lets chat_completion's error propagate; HermesAgentBaseEnv drops the group."""
    outcome = _run(name, ["HC505"])["HC505"]
    assert outcome.status is Status.PASSED, outcome


@pytest.mark.parametrize("name", ["raw_atropos_env.py", "exact_answer_env.py"])
def test_the_group_of_a_correct_env_is_json(name: str) -> None:
    """HC207's twins: messages as dicts, tokens as lists of int (group_sdk_messages.py appends the SDK object)."""
    outcome = _run(name, ["HC207"])["HC207"]
    assert outcome.status is Status.PASSED, outcome


def test_eval_tools_and_prompt_parity_pass_on_the_twin() -> None:
    """HC709/HC710 on the env eval_stale_tools.py and prompt_rotating_template.py were made from: same tools in
    eval as in training, and the same prompt text for an item every time."""
    found = _run("exact_answer_env.py", ["HC709", "HC710"])
    assert found["HC709"].status is Status.PASSED, found["HC709"]
    assert found["HC710"].status is Status.PASSED, found["HC710"]


def test_the_training_system_prompt_in_eval_passes_under_thorough_too() -> None:
    """The twin of eval_no_system_prompt.py: evaluate() builds its messages with initial_messages(item), so the
    system prompt training gives is there (HC709 errors when no eval request shows it, in every run)."""
    outcome = _run("exact_answer_env.py", ["HC709"], thorough=True)["HC709"]
    assert outcome.status is Status.PASSED, outcome


@pytest.mark.slow
@pytest.mark.parametrize("name", ["raw_atropos_env.py", "exact_answer_env.py"])
def test_eval_under_server_errors_is_reported_by_correct_envs(name: str) -> None:
    """HC708's twins: the raw env's evaluate() raises; HermesAgentBaseEnv.evaluate_log adds eval/api_errors."""
    outcome = _run(name, ["HC708"], thorough=True)["HC708"]
    assert outcome.status is Status.PASSED, outcome


@pytest.mark.slow
@pytest.mark.parametrize("name", ["exact_answer_env.py", "eval_only_bench_env.py"])
def test_the_split_is_the_same_in_a_fresh_interpreter_for_correct_envs(name: str) -> None:
    """HC206's twin (a split shuffled with random.Random(3)), and the false alarm met while building it: an
    eval-only benchmark trains and evaluates on the same tasks in every process (HC202's business, not a split
    that moves). Before: HC206 failed eval_only_bench_env.py."""
    outcome = _run(name, ["HC206"], thorough=True)["HC206"]
    assert outcome.status is Status.PASSED, outcome


def test_the_costly_oracles_skip_without_thorough() -> None:
    found = _run("exact_answer_env.py", ["HC206", "HC708"])
    for check_id in ("HC206", "HC708"):
        assert found[check_id].status is Status.SKIPPED, found[check_id]
        assert "--thorough" in found[check_id].note


def test_every_new_oracle_has_its_mutant() -> None:
    declared = {
        "split_unseeded_shuffle.py": "HC206",
        "group_sdk_messages.py": "HC207",
        "group_scores_server_errors.py": "HC505",
        "eval_errors_scored_zero.py": "HC708",
        "eval_stale_tools.py": "HC709",
        "prompt_rotating_template.py": "HC710",
        "eval_rotating_window.py": "HC711",
    }
    for name, check_id in declared.items():
        assert name in BY_NAME, name
        assert check_id in Path(BY_NAME[name]).read_text(encoding="utf-8")


def test_a_finding_without_a_counterexample_replays_in_a_fresh_process(tmp_path: Path) -> None:
    """`hermes-envs replay FILE` reruns the check of a finding that has no transcript (HC505 here). Before: a fresh
    replay process had no check registered and every such replay ended "raised KeyError: 'HC505'"."""
    import dataclasses
    import json
    import subprocess
    import sys

    from hermes_envs.conformance._replay import REPRODUCED

    stored = tmp_path / "finding.json"
    settings = dataclasses.asdict(Settings(**CORPUS_SETTINGS, contain=False))
    stored.write_text(
        json.dumps(
            {
                "env": str(BY_NAME["group_scores_server_errors.py"]),
                "class": "ErrorAsZeroEnv",
                "check": "HC505",
                "settings": settings,
                "finding": {"subject": "", "message": "", "fix": ""},
                "counterexample": None,
            }
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "hermes_envs.cli", "replay", str(stored)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == REPRODUCED, done.stdout[-2000:] + done.stderr[-2000:]
    assert "HC505 reproduces" in done.stdout + done.stderr
