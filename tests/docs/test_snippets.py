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


#: Runs each file named on its command line as ``python FILE`` would (``__main__``, its folder first on sys.path), in a
#: child forked from one interpreter that imported atroposlib once: every block still starts from the same pristine
#: process state and sees nothing of the other blocks, without paying the ~2.5 s of CPU of a fresh interpreter each.
#: Writes FILE.out / FILE.err / FILE.rc.
_FORKED = """
import importlib, os, runpy, sys, traceback

importlib.import_module(sys.argv[1])  # atroposlib.envs.base: what every block imports (directly or not)
for path in sys.argv[2:]:
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, suffix in ((1, ".out"), (2, ".err")):
            os.dup2(os.open(path + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        sys.argv, sys.path[0], code = [path], os.path.dirname(path), 0
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    with open(path + ".rc", "w") as rc:
        rc.write(str(os.waitstatus_to_exitcode(status)))
"""


def _run_each_on_its_own(
    doc: str,
    bodies: list[str],
    folder: Path,
    preload: str = "atroposlib.envs.base",
    environ: dict[str, str] | None = None,
) -> None:
    """Each block copied alone into a file and run: forked from one warm interpreter where the OS has fork.
    ``environ`` replaces the default environment (this venv's, offline, the checkout on PYTHONPATH)."""
    environ = environ if environ is not None else _environ()
    scripts = []
    for number, body in enumerate(bodies, start=1):
        script = folder / f"snippet_{number}.py"
        script.write_text(body, encoding="utf-8")
        scripts.append(script)
    if hasattr(os, "fork"):
        argv = [sys.executable, "-c", _FORKED, preload, *map(str, scripts)]
        subprocess.run(argv, cwd=ROOT, env=environ, timeout=240 * len(scripts), check=False)
    for number, script in enumerate(scripts, start=1):
        if hasattr(os, "fork"):
            rc = Path(f"{script}.rc")
            code = int(rc.read_text()) if rc.exists() else -1
            out, err = (Path(f"{script}{s}").read_text(errors="replace") for s in (".out", ".err"))
        else:
            done = subprocess.run(
                [sys.executable, str(script)],
                cwd=ROOT,
                env=environ,
                capture_output=True,
                text=True,
                timeout=240,
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        assert code == 0, (
            f"python block {number} of {doc} (run on its own) failed:\n{out[-2000:]}\n{err[-4000:]}"
        )


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
    if doc in STANDALONE:
        _run_each_on_its_own(doc, bodies, tmp_path)
    elif bodies:
        script = tmp_path / "snippets.py"
        script.write_text("\n\n".join(bodies), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=ROOT,
            env=_environ(),
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert done.returncode == 0, (
            f"the snippets of {doc} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )
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


def test_blocks_run_on_their_own_see_nothing_of_each_other_and_report_failures(tmp_path: Path) -> None:
    defines = "import sys\nSHARED = 1\nsys.modules['json'].SHARED = 1\n"
    uses = "import json\nprint(json.SHARED if hasattr(json, 'SHARED') else 'clean')\nprint(SHARED)\n"
    with pytest.raises(AssertionError, match=r"python block 2 of guide\.md \(run on its own\)") as failed:
        _run_each_on_its_own("guide.md", [defines, uses], tmp_path, preload="json")
    assert "clean" in str(failed.value) and "NameError: name 'SHARED' is not defined" in str(failed.value)
    _run_each_on_its_own(
        "guide.md", ["import sys\nassert __name__ == '__main__'\nprint(sys.argv)\n"], tmp_path
    )
