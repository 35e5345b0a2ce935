"""HC904 (issue 29, effects): a raw env runs the model's code away from the trainer. The blind3 corpus's raw snippet
executor (written blind to the kit) is the correct env; its mutants run the code in the trainer's cwd, with the
trainer's environment, or leave their temporary folders behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._findings import Severity
from hermes_envs.conformance.checks.model_code import CANARY, MARKER

from .corpus import CORPUS, CORPUS_SETTINGS

BLIND3 = CORPUS / "blind3"


def _run(name: str | Path) -> object:
    """HC904 on ``name`` in this process, from a scratch cwd (the uncontained kit leaves the cwd alone, and the
    mutants' model code writes into it)."""
    with tempfile.TemporaryDirectory(prefix="hc904-cwd-") as scratch, contextlib.chdir(scratch):
        with EnvSession(
            name if isinstance(name, Path) else BLIND3 / name,
            settings=Settings(**CORPUS_SETTINGS, select=["HC904"]),
        ) as session:
            return session.run("HC904")


def test_the_correct_executor_passes_and_the_kit_leaves_no_trace() -> None:
    outcome = _run("raw_snippet_exec_env.py")
    assert outcome.status is Status.PASSED, [f.render() for f in outcome.findings]
    assert CANARY not in os.environ


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("m_raw_cwd_host.py", "trainer's own working directory"),
        ("m_raw_env_inherit.py", "could read $" + CANARY),
    ],
)
def test_model_code_in_the_trainers_cwd_or_environment_is_an_error(name: str, words: str) -> None:
    outcome = _run(name)
    assert outcome.status is Status.FAILED, outcome
    assert [f.severity for f in outcome.findings] == [Severity.ERROR]
    assert words in outcome.findings[0].message
    assert not (Path.cwd() / MARKER).exists()  # nothing reached the cwd the test runs from


def test_working_folders_left_behind_are_a_warning() -> None:
    outcome = _run("m_raw_tmp_leak.py")
    assert outcome.status is Status.WARNED, outcome
    assert "left behind" in outcome.findings[0].message


def test_an_agent_env_is_not_applicable() -> None:
    outcome = _run(CORPUS / "good" / "file_task_env.py")
    assert outcome.status is Status.NOT_APPLICABLE


def test_a_file_written_into_the_trainers_working_directory_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HC903 called a write into the cwd the kit was started from (outside the checkout) a warning; that folder is
    the trainer's, shared by every rollout and run (blind3's audit log written with a relative path)."""
    from hermes_envs.conformance._runner import run_conformance

    from .test_containment import _env

    _checkout, env_file = _env(tmp_path, module='\nopen("audit.jsonl", "a").write("x")\n')
    trainer = tmp_path / "trainer"
    trainer.mkdir()
    monkeypatch.chdir(trainer)
    with pytest.warns(RuntimeWarning):
        report = run_conformance([str(env_file)], Settings(select=["HC101", "HC903"], namespaces=False))
    (outcome,) = [o for o in report.envs[0].outcomes if o.check_id == "HC903"]
    (finding,) = [f for f in outcome.findings if f.subject == str(trainer / "audit.jsonl")]
    assert finding.severity is Severity.ERROR and "trainer's working directory" in finding.message
    assert "hostile_env.py:" in finding.message


def test_the_model_code_hc904_hands_a_raw_env_is_not_an_hc903_spawn() -> None:
    """HC903 warned "run commands through ctx.terminal" on the correct raw executor once HC904 made it run code: a
    raw env has no ctx, and running the model's code is its task (HC904 judges how it does)."""
    from hermes_envs.conformance._container import ContainerResult
    from hermes_envs.conformance.checks.host import host_findings

    def spawn(phase: str) -> dict[str, str]:
        return {
            "ev": "effect",
            "kind": "spawned",
            "detail": f"python -I {phase}.py",
            "site": "env.py:9",
            "phase": phase,
        }

    result = ContainerResult(events=[spawn("model-code"), spawn("rewards")])
    found = host_findings(CORPUS / "good" / "raw_qa_env.py", result)
    assert [f.subject for f in found] == ["python -I rewards.py"]
