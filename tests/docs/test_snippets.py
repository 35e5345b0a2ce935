"""Every ```python block in the guides runs, as written.

Per document, the blocks that start with a ``# test_*.py`` comment are test files: each is written to a temporary
folder and run with pytest (the plugin's fixtures come from the installed package). The other blocks are joined, in
order, into one script (later blocks may use earlier definitions) and run with the venv's Python from the repo root.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The guides whose snippets are executed (each must have at least one python block, or be listed in SHELL_ONLY).
DOCS = [
    "README.md",
    "docs/testing-your-env.md",
    "docs/ci.md",
    "docs/framework.md",
    "docs/cassettes.md",
]
SHELL_ONLY = {"README.md", "docs/ci.md"}
#: Guides that promise each python block runs on its own (copied alone into a file): run one by one, not joined.
STANDALONE = {"docs/testing-your-env.md"}
_FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks(doc: str, language: str = "python") -> list[str]:
    return [
        body for lang, body in _FENCE.findall((ROOT / doc).read_text(encoding="utf-8")) if lang == language
    ]


def _environ() -> dict[str, str]:
    from hermes_envs.testing.offline import offline_environ

    return {**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)}


def test_every_guide_has_checked_snippets() -> None:
    for doc in DOCS:
        assert blocks(doc) or doc in SHELL_ONLY, f"{doc} has no python block; list it in SHELL_ONLY"


@pytest.mark.slow
@pytest.mark.parametrize("doc", [d for d in DOCS if d not in SHELL_ONLY])
def test_python_snippets_run(doc: str, tmp_path: Path) -> None:
    scripts, tests = [], []
    for body in blocks(doc):
        first = body.lstrip().splitlines()[0] if body.strip() else ""
        name = re.fullmatch(r"#\s*(test_\w+\.py)\s*", first)
        (tests if name else scripts).append((name.group(1) if name else None, body))
    bodies = [body for _, body in scripts]
    runs = [[b] for b in bodies] if doc in STANDALONE else ([bodies] if bodies else [])
    for number, run in enumerate(runs, start=1):
        script = tmp_path / f"snippet_{number}.py"
        script.write_text("\n\n".join(run), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=ROOT,
            env=_environ(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        what = (
            f"python block {number} of {doc} (run on its own)"
            if doc in STANDALONE
            else f"the snippets of {doc}"
        )
        assert done.returncode == 0, f"{what} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    for name, body in tests:
        folder = tmp_path / name.removesuffix(".py")
        folder.mkdir()
        (folder / name).write_text(body, encoding="utf-8")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(folder),
                str(folder / name),
            ],
            cwd=folder,
            env=_environ(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, (
            f"{name} from {doc} failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
        )
