"""The top-level ``tools`` stand-in never breaks a user: a real ``tools`` package anywhere on sys.path wins, a
user's own ``tools`` package is never shadowed, and without one upstream's imports work. Each case runs in a fresh
interpreter, so sys.modules and sys.meta_path are exactly what a user would have."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )


def make_tools_package(where: Path, *, with_terminal_tool: bool) -> Path:
    package = where / "tools"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("OWNER = 'user'\n")
    if with_terminal_tool:
        (package / "terminal_tool.py").write_text(
            "def cleanup_vm(task_id):\n    return 'real hermes-agent'\n"
            "register_task_env_overrides = clear_task_env_overrides = cleanup_all_environments = cleanup_vm\n"
        )
    return where


def test_without_a_tools_package_upstream_imports_resolve_to_ours() -> None:
    done = run(
        """
        import environments.agent_loop  # what an upstream env file imports first
        from tools.terminal_tool import (
            register_task_env_overrides, clear_task_env_overrides, cleanup_vm, cleanup_all_environments,
        )
        from tools.budget_config import BudgetConfig, DEFAULT_RESULT_SIZE_CHARS
        import tools
        print(cleanup_vm.__module__, BudgetConfig().default_result_size == DEFAULT_RESULT_SIZE_CHARS)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hermes_envs.compat.terminal_tool", "True"]


def test_a_real_hermes_agent_tools_package_wins(tmp_path: Path) -> None:
    make_tools_package(tmp_path, with_terminal_tool=True)
    done = run(
        """
        import environments.agent_loop
        from tools.terminal_tool import cleanup_vm
        import tools
        print(tools.OWNER, cleanup_vm("t"))
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "user real hermes-agent"


def test_a_users_own_tools_package_is_never_shadowed(tmp_path: Path) -> None:
    make_tools_package(tmp_path, with_terminal_tool=False)
    done = run(
        """
        import environments.agent_loop
        import tools
        print(tools.OWNER)
        try:
            import tools.terminal_tool
        except ModuleNotFoundError as exc:
            print("missing", exc.name)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["user", "missing", "tools.terminal_tool"]


def test_a_plain_tools_folder_without_init_does_not_hide_the_stand_in(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "release.py").write_text("NAME = 'script'\n")
    done = run(
        """
        import environments
        import tools.release
        from tools.terminal_tool import cleanup_vm
        print(tools.release.NAME, cleanup_vm.__module__)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["script", "hermes_envs.compat.terminal_tool"]


def test_a_tools_package_added_to_sys_path_later_still_wins(tmp_path: Path) -> None:
    make_tools_package(tmp_path, with_terminal_tool=True)
    done = run(
        f"""
        import sys
        import environments.agent_loop  # the finder is installed before the user's path is added
        sys.path.insert(0, {str(tmp_path)!r})  # as upstream env files add their repo root
        from tools.terminal_tool import cleanup_vm
        print(cleanup_vm("t"))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "real hermes-agent"


def test_the_stand_in_serves_only_the_upstream_names() -> None:
    done = run(
        """
        import environments
        try:
            import tools.browser_tool
        except ModuleNotFoundError as exc:
            print("missing", exc.name)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["missing", "tools.browser_tool"]


def test_installing_twice_keeps_one_finder() -> None:
    done = run(
        """
        import sys
        from hermes_envs.compat import LayoutFinder, StandInFinder, install_layout, install_standins
        import environments
        install_standins(); install_standins(); install_layout()
        ours = [type(f).__name__ for f in sys.meta_path if isinstance(f, (StandInFinder, LayoutFinder))]
        print(*ours, all(isinstance(f, (StandInFinder, LayoutFinder)) for f in sys.meta_path[-2:]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["StandInFinder", "LayoutFinder", "True"]
