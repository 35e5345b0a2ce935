"""docs/ci.md and testing-your-env §8 say `--hermes-report` works under xdist: the report has every env, the check
titles and real timings, as a serial run's does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .test_snippets import ROOT

ENVS = ["environments/arithmetic_env.py", "environments/judge_env.py"]


def _report(tmp_path: Path, *xdist: str) -> dict:
    from hermes_envs.testing.offline import offline_environ

    out = tmp_path / f"report{len(xdist)}.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *xdist, "--hermes-conformance", *ENVS,
         "--hermes-select", "HC1,HC40", "--hermes-report", str(out)],
        cwd=ROOT,
        env={**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.mark.slow  # two conformance runs of two envs in pytest subprocesses
def test_json_report_under_xdist_matches_a_serial_one(tmp_path: Path) -> None:
    serial, parallel = _report(tmp_path), _report(tmp_path, "-n", "2", "--dist", "loadscope")
    assert [e["env"] for e in parallel["envs"]] == [e["env"] for e in serial["envs"]]
    for env_serial, env_parallel in zip(serial["envs"], parallel["envs"]):
        assert env_parallel["seconds"] > 0.0 and env_serial["seconds"] > 0.0
        strip = [{k: c[k] for k in ("id", "title", "status")} for c in env_serial["checks"]]
        assert [{k: c[k] for k in ("id", "title", "status")} for c in env_parallel["checks"]] == strip
        titles = {c["id"]: c["title"] for c in env_parallel["checks"]}
        assert titles["HC401"] == "compute_reward uses AgentResult as an object"


def test_the_guides_agree_about_the_report_under_xdist() -> None:
    for doc in ("docs/ci.md", "docs/testing-your-env.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert "not filled in under xdist" not in text
        assert "--hermes-report" in text and "under xdist too" in text, doc
