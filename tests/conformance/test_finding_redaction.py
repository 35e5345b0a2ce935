"""Findings are redacted where they are made (issue #28): an env whose error text carries the trainer's
``OPENAI_API_KEY`` or a DB password does not put them in the terminal report or the ``--report`` JSON."""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_envs.conformance._findings import Finding, Outcome, Status
from hermes_envs.testing.offline import offline_environ

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "environments" / "arithmetic_env.py"
_RNG = random.Random(281)
# Built at run time (seeded): a key shape and a password, and no key-shaped literal in this file.
KEY = "sk-proj-" + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(40)) + "7Q"
PASSWORD = "".join(_RNG.choice(string.ascii_lowercase) for _ in range(10)) + "-42"


def test_a_finding_and_a_note_hold_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_DB_PASSWORD", PASSWORD)
    f = Finding(
        "HC201", f"setup() raised: bad key {KEY}; login with {PASSWORD} refused", f"rotate {KEY}", subject=KEY
    )
    assert KEY not in f.render() and PASSWORD not in f.render() and "REDACTED" in f.message
    assert f.fix == "rotate REDACTED" and f.subject == "REDACTED"
    assert PASSWORD not in Outcome("HC201", Status.SKIPPED, note=f"setup() said {PASSWORD}").note


def test_check_redacts_an_env_error_holding_the_key_in_terminal_and_report(tmp_path: Path) -> None:
    env_file = tmp_path / "leaky_env.py"
    raising = (
        "    async def setup(self) -> None:\n        import os\n\n        raise RuntimeError(\n"
        "            f\"grader refused key {os.environ['OPENAI_API_KEY']} and password "
        "{os.environ['GRADER_DB_PASSWORD']}\"\n        )\n"
    )
    env_file.write_text(
        EXAMPLE.read_text().replace(
            "    async def setup(self) -> None:\n", raising + "\n    async def _old_setup(self) -> None:\n", 1
        )
    )
    report = tmp_path / "r.json"
    env = {
        **os.environ,
        **offline_environ(),
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": KEY,
        "GRADER_DB_PASSWORD": PASSWORD,
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hermes_envs.cli",
            "check",
            str(env_file),
            "--select",
            "HC201",
            "--report",
            str(report),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "grader refused key REDACTED and password REDACTED" in done.stdout
    for text in (done.stdout, done.stderr, report.read_text()):
        assert KEY not in text and PASSWORD not in text
