"""An author's repository laid out like upstream hermes-agent, with the built wheel installed: its own
``environments/__init__.py`` (upstream's, importing the layout modules), and an env in ``environments/benchmarks/
sums/`` that imports its sibling ``environments.benchmarks.sums.helpers`` by package path. The pytest gate on the
folder and ``hermes-envs check`` on the file both pass; nothing of hermes-envs is imported by the author's code
before ``environments`` (the wheel's start-up hook and the loader make the two packages one)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, clean_environ

pytestmark = pytest.mark.slow  # a fresh venv with the wheel, a full conformance run twice

GOOD_ENV = (ROOT / "environments" / "arithmetic_env.py").read_text(encoding="utf-8")
#: upstream's environments/__init__.py re-exports the layout modules it expects beside it
UPSTREAM_INIT = (
    "from environments.agent_loop import AgentResult, HermesAgentLoop\n"
    "from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig\n"
    "from environments.tool_context import ToolContext\n"
)


def upstream_layout_repository(folder: Path) -> Path:
    """``folder/environments/{__init__.py, benchmarks/__init__.py, benchmarks/sums/{__init__,helpers,sums_env}.py}``:
    the env's system prompt lives in its sibling module."""
    prompt = re.search(r"^SYSTEM_PROMPT = \(\n.*?^\)\n", GOOD_ENV, re.S | re.M)
    assert prompt is not None
    env = GOOD_ENV.replace(
        prompt.group(0), "from environments.benchmarks.sums.helpers import SYSTEM_PROMPT  # noqa: E402\n"
    )
    package = folder / "environments" / "benchmarks" / "sums"
    package.mkdir(parents=True)
    (folder / "environments" / "__init__.py").write_text(UPSTREAM_INIT, encoding="utf-8")
    (folder / "environments" / "benchmarks" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "helpers.py").write_text(prompt.group(0), encoding="utf-8")
    (package / "sums_env.py").write_text(env, encoding="utf-8")
    return folder


def run(bin_dir: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        cwd=cwd,
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_an_upstream_layout_repository_passes_the_gate_and_check(installed: Path, tmp_path: Path) -> None:
    repo = upstream_layout_repository(tmp_path / "their-repo")

    imported = run(
        installed, "python", "-c",
        "import environments.benchmarks.sums.sums_env as m, hermes_envs;"
        "print(m.ArithmeticTerminalEnv.__mro__[1] is hermes_envs.HermesAgentBaseEnv, m.SYSTEM_PROMPT[:7])",
        cwd=repo,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr[-3000:]  # `python -c` puts the repo first, as `-m` does
    assert imported.stdout.split() == ["True", "You", "are"]

    standalone = run(
        installed, "python", "-c",
        "import sys; from tools.budget_config import budget_for_context_window as b; import toolsets;"
        "print(b(16384).default_result_size, 'environments' in sys.modules, callable(toolsets.create_custom_toolset))",
        cwd=tmp_path,
    )  # fmt: skip
    assert standalone.returncode == 0, standalone.stderr[
        -3000:
    ]  # the wheel's start-up hook, nothing imported
    assert standalone.stdout.split() == ["9830", "False", "True"]

    gate = run(
        installed, "python", "-m", "pytest", "-p", "no:cacheprovider", "--hermes-conformance", "environments/",
        "--hermes-report", "r.md", cwd=repo,
    )  # fmt: skip
    assert gate.returncode == 0, gate.stdout[-4000:] + gate.stderr[-2000:]
    report = (repo / "r.md").read_text(encoding="utf-8")
    assert "sums_env.py::ArithmeticTerminalEnv" in report and "| HC401" in report
    assert "| failed |" not in report and "install hermes-agent" not in report
    assert (
        "PytestAssertRewriteWarning" not in gate.stdout + gate.stderr
    )  # the start-up hook's module is exempt

    checked = run(installed, "hermes-envs", "check", "environments/benchmarks/sums/sums_env.py", cwd=repo)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert "PASSED         HC101" in checked.stdout and "FAILED" not in checked.stdout
