"""How the `hermes-envs check` process ends: without tearing its ~2,000 modules down, but only after what an exit
owes: the exit status, every line of the report, the kit's ``atexit`` handlers (the env's own run in its container,
never on the host)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs.testing.offline import offline_environ

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "environments" / "arithmetic_env.py"


def _check(env_file: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **offline_environ(), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "hermes_envs.cli", "check", str(env_file), *extra],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.slow
def test_the_check_process_runs_its_exit_handlers_and_keeps_its_status(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    marker = tmp_path / "atexit-ran"
    env_file = tmp_path / "arith_with_atexit.py"
    env_file.write_text(
        EXAMPLE.read_text()
        + f"\nimport atexit as _atexit\n_atexit.register(lambda: open({str(marker)!r}, 'w').write('ok'))\n"
    )
    done = _check(env_file, scratch, "--select", "HC1,HC3,HC6", "--report", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr[-2000:]
    *report, summary = done.stdout.rstrip().splitlines()
    assert report[-1].startswith("  ") and summary.startswith("== 0 failed, ")  # every line, then the summary
    assert (tmp_path / "r.json").is_file()
    # The env runs contained: its atexit handler never runs on the host (it could rewrite the report), while the
    # kit's own exit work still runs: the container's folder and the sandboxes are gone.
    assert not marker.exists()
    assert [p.name for p in scratch.iterdir()] == []

    broken = tmp_path / "broken_env.py"
    broken.write_text(
        EXAMPLE.read_text().replace("        return config, servers", "        return config, servers[0]")
    )
    failed = _check(broken, scratch, "--select", "HC104")
    assert failed.returncode == 1 and "HC104" in failed.stdout


def _heavy_imports(importtime_log: str) -> set[str]:
    """The heavy libraries a ``-X importtime`` log shows imported (its lines end with the module's name)."""
    names = {
        line.rsplit("|", 1)[-1].strip()
        for line in importtime_log.splitlines()
        if line.startswith("import time")
    }
    return names & {"atroposlib", "transformers", "hermes_envs.conformance._session"}


def test_paths_with_no_environment_end_before_the_kit_and_atroposlib_are_imported(tmp_path: Path) -> None:
    """The pre-commit hook on a commit touching only helper modules: "no environment found" (0 with --no-env-ok,
    5 without) from discovery alone, never importing atroposlib, transformers or the session; a broken
    [tool.hermes-conformance] is still a usage error (4), as the settings are read before discovery."""
    (tmp_path / "helper.py").write_text("def helper():\n    return 1\n")
    env = {**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)}

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-X", "importtime", "-m", "hermes_envs.cli", "check", *args]
        return subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240)

    done = check("--no-env-ok", "helper.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "no environment found in helper.py" in done.stderr and "Nothing to check (--no-env-ok)" in done.stderr
    )
    assert not _heavy_imports(done.stderr)
    done = check("helper.py")
    assert done.returncode == 5 and not _heavy_imports(done.stderr), done.stderr[-3000:]
    (tmp_path / "pyproject.toml").write_text("[tool.hermes-conformance]\nno_such_setting = 1\n")
    done = check("--no-env-ok", "helper.py")
    assert done.returncode == 4 and "no_such_setting" in done.stderr, done.stderr[-3000:]
