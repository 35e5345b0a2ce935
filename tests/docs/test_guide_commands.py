"""The remaining one-line commands of README.md and testing-your-env.md, run as written from a project folder
(``.venv`` linked to the venv running the tests, the env files the guide expects in ``environments/``)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from .test_readme import run_block
from .test_snippets import ROOT, blocks

EXAMPLES = ("arithmetic_env.py", "file_task_env.py", "judge_env.py")


def one_line(doc: str, pattern: str) -> str:
    (line,) = [
        c.split("  #")[0].strip()
        for b in blocks(doc, "bash")
        for c in b.splitlines()
        if re.search(pattern, c)
    ]
    return line


def folder_with(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".venv").symlink_to(sys.prefix)
    (tmp_path / "environments").mkdir()
    for target, source in files.items():
        shutil.copy(ROOT / "environments" / source, tmp_path / "environments" / target)
    return tmp_path


@pytest.mark.slow  # one conformance run in a pytest subprocess
def test_readme_pytest_conformance_command(tmp_path: Path) -> None:
    command = one_line("README.md", r"^\.venv/bin/pytest --hermes-conformance")
    folder = folder_with(tmp_path, {"my_env.py": "arithmetic_env.py"})  # what the Quickstart leaves
    done = run_block(command + " -p no:cacheprovider -q", folder)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout) and "failed" not in done.stdout


@pytest.mark.slow  # three envs on two xdist workers
def test_guide_parallel_conformance_command(tmp_path: Path) -> None:
    command = one_line("docs/testing-your-env.md", r"^\.venv/bin/pytest -n 2 ")
    folder = folder_with(tmp_path, {name: name for name in EXAMPLES})
    done = run_block(command + " -p no:cacheprovider", folder, timeout=400)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 workers" in done.stdout and " failed" not in done.stdout
