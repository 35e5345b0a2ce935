"""respx and syrupy are extras (issue #27 item 19): each registers a pytest plugin that pytest imports in every run
of every project where it is installed. A user who asks for a fixture built on one without it installed is told
which extra to install, instead of "fixture 'snapshot' not found" or a bare ModuleNotFoundError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A conftest that makes `import <name>` fail as it does where the package is not installed (its pytest plugin is
# kept out with -p no:<name>, as pytest would never have found its entry point).
_MISSING = "import sys\nsys.modules[{name!r}] = None\n"

_TESTS = """
def test_rewards(reward_snapshot):
    assert [1.0] == reward_snapshot


def test_transcripts(transcript_snapshot):
    assert [] == transcript_snapshot


def test_other_http(fake_http):
    pass
"""


def _run(project: Path, *args: str) -> str:
    # CI=true (set by CI services) makes pytest print summary lines untruncated: the output must not depend on it.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HERMES_")) and k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function",
         "-q", *args],
        cwd=project,
        env={**env, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]  # the tests fail, pytest does not
    return done.stdout


def test_snapshot_fixtures_name_the_extra_when_syrupy_is_missing(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(_MISSING.format(name="syrupy"), encoding="utf-8")
    (tmp_path / "test_theirs.py").write_text(_TESTS, encoding="utf-8")
    out = _run(tmp_path, "-p", "no:syrupy", "-k", "snapshot or rewards or transcripts")
    for fixture in ("reward_snapshot", "transcript_snapshot"):
        assert (
            f"the {fixture} fixture needs syrupy, which hermes-envs installs only with its snapshots extra. "
            "Fix: pip install 'hermes-envs[snapshots]'" in out
        ), out[-3000:]
    assert "fixture 'snapshot' not found" not in out


def test_snapshot_fixtures_say_when_syrupy_is_installed_but_disabled(tmp_path: Path) -> None:
    (tmp_path / "test_theirs.py").write_text(_TESTS, encoding="utf-8")
    out = _run(tmp_path, "-p", "no:syrupy", "-k", "test_rewards")
    assert "installed but disabled in this run" in out and "-p syrupy" in out, out[-3000:]


def test_fake_http_names_the_extra_when_respx_is_missing(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(_MISSING.format(name="respx"), encoding="utf-8")
    (tmp_path / "test_theirs.py").write_text(_TESTS, encoding="utf-8")
    out = _run(tmp_path, "-p", "no:respx", "-k", "test_other_http")
    assert "pip install 'hermes-envs[fake-http]'" in out, out[-3000:]
    assert "Traceback" not in out and "ModuleNotFoundError" not in out
