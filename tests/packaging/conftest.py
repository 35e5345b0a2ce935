"""Fixtures for the packaging tests: the wheel and sdist built from the tracked files, and fresh venvs.

A fresh venv gets hermes-envs only from the wheel (``pip install --no-deps --no-index``). Its third-party
dependencies (atroposlib, openai, ...) come from the venv running the tests, through a ``.pth`` line naming that
venv's site-packages: a plain path line, so the editable install of this checkout (a ``.pth`` *import* hook there)
is not loaded, and no test needs the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tracked_copy(target: Path) -> Path:
    """The tracked files of this checkout (their working-tree content) copied to ``target``."""
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
        .stdout.decode()
        .split("\0")
    )
    if not any(files):
        pytest.skip("not a git checkout: cannot tell which files the sdist should hold")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def clean_environ(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH into this checkout, offline Hub and wandb."""
    from hermes_envs.testing.offline import offline_environ

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, **offline_environ(), **extra}


def _build(out: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``make dist`` (the README's command) in a copy of the tracked files, with the venv running the tests as
    the Makefile's ``.venv`` (a fresh stamp: nothing is reinstalled), then ``dist/`` moved to ``out``."""
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed: the README's `make dist` cannot run here")
    source = tracked_copy(tmp_path_factory.mktemp("source"))
    stamp = source / "installed.stamp"
    stamp.write_text("", encoding="utf-8")  # newer than the copied pyproject.toml: the install step is done
    done = subprocess.run(
        ["make", "dist", f"VENV={Path(sys.executable).parent.parent}", f"STAMP={stamp}"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=clean_environ(),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    for built in (source / "dist").iterdir():
        shutil.move(str(built), out / built.name)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make dist`` (sdist, then the wheel from the sdist) of the tracked files: once per test session, even
    when the packaging tests run on different xdist workers (the second waits for the first's build)."""
    pytest.importorskip("build", reason="`build` is in the dev extras: pip install -e '.[dev]'")
    import fcntl

    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is <session basetemp>/popen-gwN: the parent is the session's own folder
    shared = base.parent if base.name.startswith("popen-gw") else base
    out = shared / "hermes-dist"
    with open(shared / "hermes-dist.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "done").exists():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            _build(out, tmp_path_factory)
            (out / "done").write_text("", encoding="utf-8")
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("hermes_envs-*.whl")
    return found


@pytest.fixture(scope="session")
def make_venv() -> Callable[[Path], Path]:
    """``make_venv(folder)`` -> the bin folder of a new venv whose dependencies resolve as described above.

    Made ``--without-pip``: ``python -m pip`` in it runs the pip of the shared site-packages (installing into the
    new venv, the running interpreter's), like every other dependency; that saves ensurepip's ~4 s of CPU per venv.
    """
    shared = sysconfig.get_paths()["purelib"]

    def make(folder: Path) -> Path:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=180)
        python = folder / "bin" / "python"
        purelib = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        (Path(purelib) / "_shared_dependencies.pth").write_text(shared + "\n", encoding="utf-8")
        return folder / "bin"

    return make


@pytest.fixture(scope="session")
def installed(
    tmp_path_factory: pytest.TempPathFactory, make_venv: Callable[[Path], Path], wheel: Path
) -> Path:
    """The bin folder of a fresh venv with the built wheel installed."""
    bin_dir = make_venv(tmp_path_factory.mktemp("venv") / "venv")
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=180,
        env=clean_environ(),
    )
    return bin_dir
