"""README.md's commands, run the way the README writes them (bash, from a project folder with `.venv/`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .test_snippets import ROOT, blocks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def project(tmp_path: Path) -> Path:
    """A user's project folder after the quickstart: ``.venv`` (the one running the tests) and ``environments/``."""
    (tmp_path / ".venv").symlink_to(sys.prefix)
    (tmp_path / "environments").mkdir()
    shutil.copy(ROOT / "environments" / "arithmetic_env.py", tmp_path / "environments" / "my_env.py")
    return tmp_path


def run_block(block: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    from hermes_envs.testing.offline import offline_environ

    return subprocess.run(
        ["bash", "-c", "set -e\n" + block],
        cwd=cwd,
        env={**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def process_block() -> str:
    (block,) = [b for b in blocks("README.md", "bash") if "fake-server" in b and " process " in b]
    return block


def test_the_process_run_uses_a_policy_that_solves_the_item() -> None:
    block = process_block()
    assert "--policy arithmetic" in block and "environments/my_env.py process" in block
    assert "kill %1" in block  # the fake server started with & is stopped again


@pytest.mark.slow  # a process run and the viewer, in subprocesses (about 10 s)
def test_readme_process_block_runs_as_written_and_scores_the_correct_answer(tmp_path: Path) -> None:
    folder = project(tmp_path)
    port = str(free_port())
    block = process_block().replace("8765", port)
    done = run_block(block, folder)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    groups = [json.loads(line) for line in (folder / "out" / "g.jsonl").read_text().splitlines()]
    assert [g["scores"] for g in groups] == [[1.0, 1.0]]
    (conversation, *_) = groups[0]["messages"]
    answer = conversation[-1]["content"]
    question = next(m["content"] for m in conversation if m["role"] == "user")
    expression = re.search(r"What is ([\d\s*+\-]+)\?", question).group(1)
    assert answer.endswith(f"Answer: {eval(expression)}")  # the item it got, answered correctly
    assert (folder / "out" / "g.html").exists() and (folder / "out" / "g.view.html").exists()
    with socket.socket() as s:  # `kill %1` stopped the fake server: the port is free again
        s.bind(("127.0.0.1", int(port)))


def test_the_features_table_lists_each_piece_once() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Features", 1)[1].split("\n\n", 2)[1]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    wheres = [cells[-1].strip(" |") for cells in rows[1:]]
    assert sorted(w for w in set(wheres) if wheres.count(w) > 1) == []
    assert sum("hermes-envs view" in line for line in table.splitlines()) == 1


def test_paths_the_guides_name_under_scripts_exist() -> None:
    """A backticked ``.../scripts/NAME.yaml`` in a guide is a file of this checkout (`scripts/arithmetic.yaml` was
    really `environments/scripts/arithmetic.yaml`)."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {
        (doc.name, m)
        for doc in docs
        for m in re.findall(
            r"`(?:--script )?([\w./-]*scripts/[\w.-]+\.ya?ml)`", doc.read_text(encoding="utf-8")
        )
    }
    assert named and sorted((d, m) for d, m in named if not (ROOT / m).is_file()) == []
