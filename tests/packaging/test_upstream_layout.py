"""An author's repository laid out like upstream hermes-agent, with the built wheel installed: its own
``environments/__init__.py`` (upstream's, importing the layout modules), and an env in ``environments/benchmarks/
sums/`` that imports its sibling ``environments.benchmarks.sums.helpers`` by package path. The pytest gate on the
folder and ``hermes-envs check`` on the file both pass; nothing of hermes-envs is imported by the author's code
before ``environments`` (the wheel's start-up hook and the loader make the two packages one).

Upstream's tblite shape too (benchmark folders without ``__init__.py``, each file putting the repository root on
``sys.path``, one benchmark subclassing another by package path), with the wheel and with an editable install."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import ROOT, clean_environ, tracked_copy

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


#: upstream's benchmark files start so, to run as scripts (``python environments/benchmarks/x/x_env.py evaluate``)
REPO_ROOT_ON_PATH = (
    "import sys\nfrom pathlib import Path\n\n"
    "_repo_root = Path(__file__).resolve().parents[3]\n"
    "if str(_repo_root) not in sys.path:\n    sys.path.insert(0, str(_repo_root))\n\n"
)
#: a lighter benchmark reusing another one's class, as upstream's tblite reuses terminalbench_2's
LITE_BENCH = (
    REPO_ROOT_ON_PATH
    + "from environments.benchmarks.shell_bench.shell_bench_env import TASKS, MiniShellBench  # noqa: E402\n\n\n"
    "class LiteShellBench(MiniShellBench):\n"
    "    name = 'lite-shell-bench'\n\n"
    "    async def setup(self):\n"
    "        self.tasks = TASKS[:2]\n"
    "        self.pos = 0\n\n\n"
    "if __name__ == '__main__':\n    LiteShellBench.cli()\n"
)


def tblite_shaped_repository(folder: Path) -> Path:
    """``folder/environments/{__init__.py, benchmarks/shell_bench/shell_bench_env.py, benchmarks/lite/lite_env.py}``:
    no ``__init__.py`` under ``benchmarks/``; the full benchmark also imports upstream's ``tools.terminal_tool``."""
    bench = (ROOT / "conformance" / "good" / "eval_only_bench_env.py").read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    assert future in bench
    bench = bench.replace(
        future,
        future
        + "\n"
        + REPO_ROOT_ON_PATH
        + "from tools.terminal_tool import cleanup_vm, clear_task_env_overrides  # noqa: E402, F401\n",
    )
    benchmarks = folder / "environments" / "benchmarks"
    (benchmarks / "shell_bench").mkdir(parents=True)
    (benchmarks / "lite").mkdir()
    (folder / "environments" / "__init__.py").write_text(UPSTREAM_INIT, encoding="utf-8")
    (benchmarks / "shell_bench" / "shell_bench_env.py").write_text(bench, encoding="utf-8")
    (benchmarks / "lite" / "lite_env.py").write_text(LITE_BENCH, encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def editable(tmp_path_factory: pytest.TempPathFactory, make_venv: Callable[[Path], Path]) -> Path:
    """The bin folder of a fresh venv with a copy of this checkout installed with ``pip install -e``."""
    source = tracked_copy(tmp_path_factory.mktemp("editable-source"))
    bin_dir = make_venv(tmp_path_factory.mktemp("venv-editable") / "venv")
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--no-build-isolation", "-e", str(source)],
        check=True, timeout=300, env=clean_environ(), capture_output=True,
    )  # fmt: skip
    return bin_dir


@pytest.mark.parametrize("install", ["wheel", "editable"])
def test_a_tblite_shaped_benchmark_subclassing_its_sibling_runs_and_passes_check(
    install: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bin_dir: Path = request.getfixturevalue("installed" if install == "wheel" else "editable")
    repo = tblite_shaped_repository(tmp_path / "their-repo")

    standalone = run(
        bin_dir, "python", "-c",
        "import sys; from tools.budget_config import DEFAULT_RESULT_SIZE_CHARS as d;"
        "print(d, 'environments' in sys.modules)",
        cwd=tmp_path,
    )  # fmt: skip
    assert standalone.returncode == 0, standalone.stderr[
        -3000:
    ]  # no `import environments` first, either install
    assert standalone.stdout.split() == ["32768", "False"]

    script = run(bin_dir, "python", "environments/benchmarks/lite/lite_env.py", "--help", cwd=repo)
    assert script.returncode == 0, script.stderr[-3000:]  # run as upstream's README runs it
    assert "evaluate" in script.stdout

    checked = run(bin_dir, "hermes-envs", "check", "environments/benchmarks/lite/lite_env.py", cwd=repo)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    assert "lite_env.py::LiteShellBench" in checked.stdout and "MiniShellBench" not in checked.stdout
    assert "PASSED         HC101" in checked.stdout and "FAILED" not in checked.stdout
    assert "install hermes-agent" not in checked.stdout
