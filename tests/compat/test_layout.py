"""An author's repository laid out like upstream (its own ``environments/__init__.py``, envs in subpackages) and
our ``environments`` modules make one package; the base an env file gets depends only on that file's own imports.

Each case runs in a fresh interpreter with this checkout on ``PYTHONPATH`` (as an installed hermes-envs is), so
``sys.modules``, ``sys.path`` and ``sys.meta_path`` are what a user would have.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: each case starts an interpreter that imports atroposlib (several seconds)
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

HELPERS = "def answer() -> int:\n    return 42\n"
ENV = """
from environments.hermes_base_env import HermesAgentBaseEnv
from environments.benchmarks.bench_x.helpers import answer


class BenchXEnv(HermesAgentBaseEnv):
    name = "bench-x"
    expected = answer()
"""


def author_repo(where: Path, *, init: str = "") -> Path:
    """``where/environments/benchmarks/bench_x/{helpers,bench_x_env}.py`` with an ``__init__.py`` at each level."""
    package = where / "environments" / "benchmarks" / "bench_x"
    package.mkdir(parents=True)
    (where / "environments" / "__init__.py").write_text(init, encoding="utf-8")
    (where / "environments" / "benchmarks" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "helpers.py").write_text(HELPERS, encoding="utf-8")
    (package / "bench_x_env.py").write_text(ENV, encoding="utf-8")
    return where


def run(code: str, *, first: list[Path] = (), last: list[Path] = (), cwd: Path | None = None) -> str:  # type: ignore[assignment]
    """Run ``code`` with ``first`` before this checkout on sys.path and ``last`` after it; its stdout (must exit 0)."""
    path = [*map(str, first), str(ROOT), *map(str, last)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


CHECK_BASE = """
    import environments.benchmarks.bench_x.bench_x_env as m
    import hermes_envs
    print(m.BenchXEnv.__mro__[1] is hermes_envs.HermesAgentBaseEnv, m.BenchXEnv.expected)
"""


def test_the_authors_package_first_still_gets_our_upstream_modules(tmp_path: Path) -> None:
    # upstream's own environments/__init__.py imports the layout modules it expects beside it
    repo = author_repo(tmp_path, init="from environments.agent_loop import AgentResult, HermesAgentLoop\n")
    assert run(CHECK_BASE, first=[repo]).split() == ["True", "42"]


def test_our_package_first_still_gets_the_authors_subpackages(tmp_path: Path) -> None:
    repo = author_repo(tmp_path)
    out = run(
        "import environments, hermes_envs.compat as c; c.install_layout()\n" + textwrap.dedent(CHECK_BASE),
        last=[repo],
    )
    assert out.split() == ["True", "42"]


def test_tools_stand_ins_import_without_importing_environments_first() -> None:
    out = run(
        """
        import sys
        import hermes_envs.compat as c
        c.install_layout()  # what the env-file loader does before any env file runs
        from tools.budget_config import BudgetConfig, budget_for_context_window
        import tools
        print(c.is_stand_in(tools), "environments" in sys.modules, BudgetConfig().default_result_size)
        """
    )
    assert out.split() == ["True", "False", "32768"]


def test_the_loader_imports_an_env_in_a_subpackage_by_its_package_path(tmp_path: Path) -> None:
    repo = author_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run(
        f"""
        from hermes_envs.env import find_env_classes, import_env_module
        (cls,) = find_env_classes(import_env_module({str(repo / "environments/benchmarks/bench_x/bench_x_env.py")!r}))
        print(cls.__name__, cls.expected)
        """,
        cwd=elsewhere,
    )
    assert out.split() == ["BenchXEnv", "42"]


def checkout(where: Path) -> Path:
    """A hermes-agent-like checkout: its own ``environments/hermes_base_env.py``, and an env file that puts the
    checkout root on sys.path itself (as upstream's env files do)."""
    (where / "environments").mkdir(parents=True)
    (where / "environments" / "__init__.py").write_text("", encoding="utf-8")
    (where / "environments" / "hermes_base_env.py").write_text(
        "from hermes_envs.env import HermesAgentBaseEnv as _Ours\n\n\n"
        "class HermesAgentBaseEnv(_Ours):\n    UPSTREAM = True\n",
        encoding="utf-8",
    )
    (where / "environments" / "up_env.py").write_text(
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
        "from environments.hermes_base_env import HermesAgentBaseEnv  # noqa: E402\n\n\n"
        "class UpEnv(HermesAgentBaseEnv):\n    name = 'up'\n",
        encoding="utf-8",
    )
    return where


STANDALONE = "from environments.hermes_base_env import HermesAgentBaseEnv\n\n\nclass MineEnv(HermesAgentBaseEnv):\n    name = 'mine'\n"


def test_the_base_an_env_gets_does_not_depend_on_the_file_loaded_before_it(tmp_path: Path) -> None:
    up = checkout(tmp_path / "hermes-agent") / "environments" / "up_env.py"
    mine = tmp_path / "mine" / "mine_env.py"
    mine.parent.mkdir()
    mine.write_text(STANDALONE, encoding="utf-8")
    code = """
        import sys
        from hermes_envs.env import find_env_classes, import_env_module
        for path in sys.argv[1:]:
            (cls,) = find_env_classes(import_env_module(path))
            print(cls.__name__, getattr(cls, "UPSTREAM", False))
    """
    for order in ([up, mine], [mine, up]):
        out = run(
            "import sys; sys.argv[1:] = " + repr([str(p) for p in order]) + "\n" + textwrap.dedent(code)
        )
        assert sorted(out.splitlines()) == ["MineEnv False", "UpEnv True"], order


def test_a_missing_module_of_the_authors_own_package_is_named_as_theirs(tmp_path: Path) -> None:
    repo = author_repo(tmp_path / "repo")
    env = repo / "environments" / "benchmarks" / "bench_x" / "bench_x_env.py"
    env.write_text(ENV.replace("bench_x.helpers", "bench_x.helperz"), encoding="utf-8")
    out = run(
        f"""
        from hermes_envs.env import import_env_module
        from hermes_envs.errors import EnvLoadError
        try:
            import_env_module({str(env)!r})
        except EnvLoadError as exc:
            print(exc)
        """
    )
    assert "'environments.benchmarks.bench_x.helperz' is not a module of hermes-envs" in out, out
    assert "your own module" in out and "environments/benchmarks/bench_x/helperz.py" in out
    assert "install hermes-agent" not in out.lower()


def test_an_env_importing_a_sibling_benchmark_in_folders_without_init_imports(tmp_path: Path) -> None:
    # upstream's tblite env: environments/benchmarks/<name>/ folders have no __init__.py (namespace packages),
    # the file puts the repository root on sys.path itself and subclasses the terminalbench_2 env
    repo = tmp_path / "hermes-agent-like"
    (repo / "environments" / "benchmarks" / "terminalbench_2").mkdir(parents=True)
    (repo / "environments" / "benchmarks" / "tblite").mkdir(parents=True)
    (repo / "environments" / "__init__.py").write_text(
        "from environments.agent_loop import AgentResult, HermesAgentLoop\n", encoding="utf-8"
    )
    (repo / "environments" / "benchmarks" / "terminalbench_2" / "terminalbench2_env.py").write_text(
        "from environments.hermes_base_env import HermesAgentBaseEnv\n\n\n"
        "class TerminalBench2EvalEnv(HermesAgentBaseEnv):\n    name = 'tb2'\n",
        encoding="utf-8",
    )
    tblite = repo / "environments" / "benchmarks" / "tblite" / "tblite_env.py"
    tblite.write_text(
        "import sys\nfrom pathlib import Path\n\n"
        "sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent.parent))\n"
        "from environments.benchmarks.terminalbench_2.terminalbench2_env import TerminalBench2EvalEnv  # noqa: E402\n\n\n"
        "class TBLiteEvalEnv(TerminalBench2EvalEnv):\n    name = 'tblite'\n",
        encoding="utf-8",
    )
    out = run(
        f"""
        import environments  # ours first, as after checking another env file in the same process
        from hermes_envs.env import find_env_classes, import_env_module
        (cls,) = find_env_classes(import_env_module({str(tblite)!r}))
        print(cls.__name__, cls.__mro__[1].__name__)
        """
    )
    assert out.split() == ["TBLiteEvalEnv", "TerminalBench2EvalEnv"]


def test_a_folder_an_earlier_load_added_and_something_removed_from_sys_path_loads_again(
    tmp_path: Path,
) -> None:
    env = tmp_path / "again" / "again_env.py"
    env.parent.mkdir()
    env.write_text(STANDALONE.replace("MineEnv", "AgainEnv"), encoding="utf-8")
    out = run(
        f"""
        import sys
        from hermes_envs.env import find_env_classes, import_env_module
        import_env_module({str(env)!r})
        sys.path.remove({str(env.parent)!r})  # a test's monkeypatch undone, a tool resetting sys.path ...
        (cls,) = find_env_classes(import_env_module({str(env)!r}))
        print(cls.__name__, sys.path[0] == {str(env.parent)!r})
        """
    )
    assert out.split() == ["AgainEnv", "True"]
