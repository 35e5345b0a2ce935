"""docs/ci.md's workflow for other repositories, run step by step in a scratch git repository that is not ours.

The repository holds an env file of its own and, committed under ci/, the wheel `make dist` built from this
checkout: the case docs/ci.md shows until a release is published. Each `run:` step runs with bash, the job's
`env:` (its one expression evaluated as GitHub would, with the repository variable HERMES_ENVS_SPEC naming that
wheel) and a fresh venv's `python` first on PATH, exactly as written; pip is kept offline.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT, clean_environ

TEMPLATE = ROOT / ".github" / "workflow-templates" / "hermes-conformance.yml"

pytestmark = pytest.mark.slow  # a fresh venv, the wheel installed by the workflow, a conformance run

GOOD_ENV = (ROOT / "environments" / "arithmetic_env.py").read_text(encoding="utf-8")


def scratch_repository(folder: Path, wheel: Path) -> Path:
    (folder / "environments").mkdir(parents=True)
    (folder / "environments" / "counting_env.py").write_text(GOOD_ENV, encoding="utf-8")
    (folder / "ci").mkdir()
    shutil.copy(wheel, folder / "ci" / wheel.name)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(argv, cwd=folder, check=True, capture_output=True)
    return folder


def evaluate(value: str, variables: dict[str, str]) -> str:
    """A job ``env:`` value as GitHub Actions computes it: ``${{ vars.NAME || 'default' }}`` is the repository
    variable NAME when set (non-empty), else the default. Any other expression fails the test."""

    def one(match: re.Match[str]) -> str:
        return variables.get(match.group(1)) or match.group(2)

    done = re.sub(r"\$\{\{\s*vars\.(\w+)\s*\|\|\s*'([^']*)'\s*\}\}", one, value)
    assert "${{" not in done, f"an expression this test cannot evaluate: {value}"
    return done


def test_workflow_steps_pass_in_a_scratch_repository_and_fail_on_a_broken_env(
    tmp_path: Path, make_venv: Callable[[Path], Path], wheel: Path
) -> None:
    job = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))["jobs"]["conformance"]
    steps = [s for s in job["steps"] if "run" in s]
    assert [s["name"] for s in steps] == [
        "Install hermes-envs",
        "Install the environments' own requirements",
        "Conformance",
    ]
    assert evaluate(job["env"]["HERMES_ENVS"], {}) == "hermes-envs"  # no variable set: the package name
    repo = scratch_repository(tmp_path / "their-repo", wheel)
    bin_dir = make_venv(tmp_path / "runner-venv")
    variables = {"HERMES_ENVS_SPEC": f"./ci/{wheel.name}"}  # the docs' example, with this build's file name
    assert f"HERMES_ENVS_SPEC=./ci/{wheel.name}" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    env = clean_environ(
        **{k: evaluate(str(v), variables) for k, v in job["env"].items()},
        PIP_NO_DEPS="1",
        PIP_NO_INDEX="1",
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )

    def run_steps() -> list[subprocess.CompletedProcess[str]]:
        return [
            subprocess.run(
                ["bash", "-e", "-c", s["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=400
            )
            for s in steps
        ]

    install, requirements, conformance = run_steps()
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    assert requirements.returncode == 0, requirements.stderr
    assert conformance.returncode == 0, conformance.stdout[-4000:] + conformance.stderr[-2000:]
    report = (repo / "conformance-report.md").read_text(encoding="utf-8")
    assert "## counting_env.py::ArithmeticTerminalEnv" in report and "| HC401" in report
    assert "| failed |" not in report

    broken = GOOD_ENV.replace("reversed(result.messages)", 'reversed(result["messages"])')
    (repo / "environments" / "counting_env.py").write_text(broken, encoding="utf-8")
    conformance = run_steps()[2]
    assert conformance.returncode == 1, conformance.stdout[-4000:]
    assert "result['messages'] does not work" in (repo / "conformance-report.md").read_text(encoding="utf-8")
