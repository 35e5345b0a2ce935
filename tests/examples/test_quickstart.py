"""The README quickstart, as a new user runs it: a copy of an example passes; one guide mistake fails readably; the
fix makes it pass again, so environments/my_env.py is left good for the guides that use it next."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


def quickstart_commands() -> list[str]:
    """The command lines of the README's first quickstart block (comments dropped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quickstart") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [
        line.split("  #")[0].strip()
        for line in block.splitlines()
        if line.strip() and not line.startswith("#")
    ]


@pytest.mark.slow  # about 15 s: three conformance runs in subprocesses
def test_quickstart_copy_passes_then_a_guide_mistake_fails_readably(tmp_path: Path) -> None:
    from hermes_envs.testing.offline import offline_environ

    (tmp_path / "environments").mkdir()
    shutil.copy(ROOT / "environments" / "arithmetic_env.py", tmp_path / "environments")
    (tmp_path / ".venv").symlink_to(sys.prefix)  # the venv running the tests, as `make` made it
    commands = quickstart_commands()
    heads = ["cp", ".venv/bin/hermes-envs", "sed", ".venv/bin/hermes-envs", "sed", ".venv/bin/hermes-envs"]
    assert [c.split()[0] for c in commands] == heads
    env = {**os.environ, **offline_environ()}
    outputs = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        outputs.append(done)
    copied, passed, edited, failed, mended, passed_again = outputs
    assert copied.returncode == 0 and edited.returncode == 0 and mended.returncode == 0
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-2000:]
    assert "FAILED" not in passed.stdout and "PASSED         HC401" in passed.stdout
    assert failed.returncode == 1, failed.stdout[-3000:]
    finding = failed.stdout
    assert "FAILED         HC401 compute_reward uses AgentResult as an object" in finding
    assert "result['messages'] does not work. Use attributes instead (result.messages)." in finding
    assert 'At my_env.py:99: for msg in reversed(result["messages"]):' in finding
    assert "Fix: use result.messages" in finding
    assert passed_again.returncode == 0, passed_again.stdout[-3000:]
    assert (tmp_path / "environments" / "my_env.py").read_text() == (
        ROOT / "environments" / "arithmetic_env.py"
    ).read_text()
