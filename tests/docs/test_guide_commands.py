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


def test_guide_parallel_conformance_command_is_the_one_ci_md_runs() -> None:
    """The guide's parallel command is the one docs/ci.md gives (tests/docs/test_ci.py runs that one on the
    example envs): the same options, so running both would only spend another 25 s of a worker."""
    command = one_line("docs/testing-your-env.md", r"^\.venv/bin/pytest -n 2 ")
    (ci,) = [
        line.split("  #")[0].strip()
        for line in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8").splitlines()
        if " -n 2 " in line and "--hermes-conformance" in line
    ]

    def options(text: str) -> list[str]:
        words = text.replace(".venv/bin/python -m pytest", ".venv/bin/pytest").split()
        return [w for w in words if w not in ("-p", "no:cacheprovider")]

    assert options(command) == options(ci)
