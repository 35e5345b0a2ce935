"""The pytest plugin (and what hermes-envs installs with it) stays out of the way of a user's own test runs:
no warnings or library notices the user did not cause, and loading the plugin imports nothing heavy.

Costs are asserted as the modules a load imports, never as times (CI is a loaded 2-core box).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Imported by a check or a fixture when used, never by loading the plugin: each costs 0.1-1.5 s of CPU.
HEAVY = {
    "asyncio",
    "atroposlib",
    "transformers",
    "tokenizers",
    "openai",
    "httpx",
    "aiohttp",
    "hypothesis",
    "respx",
    "syrupy",
    "vcr",
    "yaml",
    "pydantic",
    "jinja2",
    "rich",
}


def _user_environ() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HERMES_", "TRANSFORMERS_"))}
    return {**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, json; import pytest; before = set(sys.modules); import hermes_envs.plugin; "
        "print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - before})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=_user_environ(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert loaded & HEAVY == set(), sorted(loaded & HEAVY)
    assert loaded <= {"hermes_envs"}, sorted(loaded)  # our own package only; its facade is lazy


def test_a_users_own_test_run_shows_no_notice_hermes_envs_caused(tmp_path: Path) -> None:
    """pytest-asyncio's loop-scope deprecation warning and transformers' "PyTorch was not found" used to be
    printed on every run of a project with hermes-envs installed."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the user's: no asyncio settings
    (tmp_path / "test_theirs.py").write_text(
        "import transformers  # noqa: F401  (as atroposlib does)\n\n\ndef test_plain():\n    assert True\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "error::DeprecationWarning", "-rA"],
        cwd=tmp_path,
        env=_user_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "loop scope for asynchronous fixtures" not in output, output[-3000:]
    assert "PyTorch was not found" not in output, output[-3000:]
    assert "warning" not in output.lower(), output[-3000:]


def test_a_project_setting_of_the_loop_scope_is_kept(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = module\n", encoding="utf-8"
    )
    (tmp_path / "test_theirs.py").write_text(
        "def test_scope(pytestconfig):\n"
        "    assert pytestconfig.getini('asyncio_default_fixture_loop_scope') == 'module'\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=_user_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def _run_with_exit_modules(project: Path, *args: str) -> tuple[set[str], str]:
    """(top-level modules loaded by the end of a pytest run in ``project``, its output); a conftest records them."""
    (project / "conftest.py").write_text(
        "import atexit, json, sys\n"
        "atexit.register(lambda: open('modules.json', 'w').write(json.dumps(sorted(sys.modules))))\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=_user_environ(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1), output[-3000:]
    return {m.split(".")[0] for m in json.loads((project / "modules.json").read_text())}, output


def test_a_run_that_never_uses_hypothesis_never_imports_it(tmp_path: Path) -> None:
    """Hypothesis's own plugin imported all of Hypothesis (~1.3 s CPU) at the end of every run, used or not."""
    (tmp_path / "test_theirs.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    modules, _output = _run_with_exit_modules(tmp_path)
    assert "hypothesis" not in modules


def test_a_run_that_uses_hypothesis_still_gets_its_report(tmp_path: Path) -> None:
    (tmp_path / "test_theirs.py").write_text(
        "from hypothesis import given, strategies as st\n\n\n"
        "@given(st.integers())\ndef test_any(x):\n    assert isinstance(x, int)\n",
        encoding="utf-8",
    )
    _modules, output = _run_with_exit_modules(tmp_path, "--hypothesis-show-statistics")
    assert "Hypothesis Statistics" in output and "test_any" in output, output[-2000:]


def test_a_users_own_test_run_sees_the_environment_it_was_given(tmp_path: Path) -> None:
    """The plugin set TRANSFORMERS_NO_ADVISORY_WARNINGS in every pytest session of a machine with hermes-envs
    installed (and every process the user's tests started inherited it), though no hermes option or fixture was
    used. A session without them must see, and pass on, exactly the environment it was started with."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_theirs.py").write_text(
        "import json, os, subprocess, sys\n\n\n"
        "def test_records_its_environment():\n"
        "    child = subprocess.run([sys.executable, '-c', 'import os, json; print(json.dumps(dict(os.environ)))'],\n"
        "                           capture_output=True, text=True, check=True).stdout\n"
        "    with open('seen.json', 'w') as fh:\n"
        "        json.dump({'test': dict(os.environ), 'child': json.loads(child)}, fh)\n",
        encoding="utf-8",
    )
    given = _user_environ()

    def seen(*plugin: str) -> dict[str, dict[str, str]]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *plugin],
            cwd=tmp_path,
            env=given,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        return json.loads((tmp_path / "seen.json").read_text(encoding="utf-8"))

    # pytest itself adds its own variables (PYTEST_*, and LINES/COLUMNS for child processes): the same session
    # without the plugin is the baseline
    without, loaded = seen("-p", "no:hermes_envs"), seen()
    for where, environ in loaded.items():
        added = {k: v for k, v in environ.items() if without[where].get(k) != v}
        removed = sorted(set(without[where]) - set(environ))
        assert not added and not removed, f"the {where} saw {added} added or changed, {removed} removed"
        assert not [k for k in environ if k.startswith(("HERMES_", "TRANSFORMERS_"))], sorted(environ)
