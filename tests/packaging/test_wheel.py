"""The built package works outside this repository: build the wheel and sdist, install the wheel into a fresh venv,
and run `check`, `fake-server`, `record --help`, the pytest plugin and the offline tokenizer on an env that lives
in an unrelated folder."""

from __future__ import annotations

import json
import subprocess
import tarfile
import urllib.request
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT, clean_environ

pytestmark = pytest.mark.slow  # builds a wheel, makes a venv, runs the CLI and pytest in it

PLUGIN_TEST = """
import pytest


@pytest.mark.fake_openai(script={"turns": [{"content": "hello from the fake model"}]})
def test_fake_openai_fixture(fake_openai):
    import openai

    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="x")
    reply = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "hello from the fake model"
"""


def test_wheel_and_sdist_hold_what_users_need(dist: Path, wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "hermes_envs/testing/assets/tokenizer/tokenizer.json",
        "hermes_envs/py.typed",
        "hermes_envs/viewer/render.py",
        "environments/hermes_base_env.py",
        "environments/arithmetic_env.py",
    ):
        assert needed in names, needed
    (meta,) = [n for n in names if n.endswith("entry_points.txt")]
    entry_points = zipfile.ZipFile(wheel).read(meta).decode()
    assert (
        "hermes-envs = hermes_envs.cli:main" in entry_points
        and "hermes_envs = hermes_envs.plugin" in entry_points
    )
    (sdist,) = dist.glob("hermes_envs-*.tar.gz")
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    assert {"pyproject.toml", "README.md", "hermes_envs/testing/assets/tokenizer/tokenizer.json"} <= members


def test_plugins_imported_by_every_pytest_run_are_extras_not_dependencies(wheel: Path) -> None:
    """respx and syrupy register pytest plugins that pytest imports in every run of every project where they are
    installed (~0.6 s and ~0.3 s of CPU on a one-test project): hermes-envs installs them only with the extras of
    the fixtures that use them (issue #27 item 19)."""
    archive = zipfile.ZipFile(wheel)
    (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [
        line.split(":", 1)[1].strip()
        for line in archive.read(meta).decode().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    unconditional = {
        r.split(";")[0].split(">")[0].split("<")[0].split("=")[0].strip() for r in requires if ";" not in r
    }
    assert {"respx", "syrupy"}.isdisjoint(unconditional), sorted(unconditional)
    assert {
        "pytest",
        "pytest-asyncio",
        "hypothesis",
        "vcrpy",
    } <= unconditional  # what the harness still needs
    assert any(r.startswith("respx") and 'extra == "fake-http"' in r for r in requires), requires
    assert any(r.startswith("syrupy") and 'extra == "snapshots"' in r for r in requires), requires


def run(bin_dir: Path, *argv: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]],
        cwd=cwd,
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_installed_wheel_runs_on_an_env_in_an_unrelated_folder(installed: Path, tmp_path: Path) -> None:
    folder = tmp_path / "someone-elses-project"
    folder.mkdir()
    env_file = folder / "sums_env.py"
    env_file.write_text((ROOT / "environments" / "arithmetic_env.py").read_text(encoding="utf-8"))

    where = run(installed, "python", "-c", "import hermes_envs; print(hermes_envs.__file__)", cwd=folder)
    assert where.stdout.startswith(str(installed.parent)), where.stdout + where.stderr  # from the wheel

    tokenizer = run(installed, "hermes-envs", "tokenizer-path", cwd=folder)
    assert tokenizer.returncode == 0 and tokenizer.stdout.startswith(str(installed.parent))
    assert (Path(tokenizer.stdout.strip()) / "tokenizer.json").is_file()

    checked = run(installed, "hermes-envs", "check", "sums_env.py", "--select", "HC1,HC2,HC40", cwd=folder)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "PASSED         HC401" in checked.stdout and "PyTorch" not in checked.stderr

    recorder = run(installed, "hermes-envs", "record", "--help", cwd=folder)
    assert recorder.returncode == 0 and "usage: hermes-envs record" in recorder.stdout

    server = subprocess.Popen(
        [str(installed / "hermes-envs"), "fake-server", "--port", "0", "--policy", "arithmetic"],
        cwd=folder,
        env=clean_environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = server.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), server.stderr.read() if server.poll() else base_url
        with urllib.request.urlopen(f"{base_url}/models", timeout=10) as reply:
            assert json.load(reply)["data"][0]["id"] == "fake"
        process = run(
            installed, "python", "sums_env.py", "process",
            "--env.total_steps", "1", "--env.group_size", "2", "--env.use_wandb", "False",
            "--env.tokenizer_name", tokenizer.stdout.strip(), "--env.data_path_to_save_groups", "out/g.jsonl",
            "--openai.base_url", base_url, "--openai.model_name", "fake", "--openai.api_key", "x",
            "--openai.health_check", "False",
            cwd=folder,
        )  # fmt: skip
        assert process.returncode == 0, process.stderr[-3000:]
    finally:
        server.terminate()
        server.communicate(timeout=30)
    (group,) = [json.loads(line) for line in (folder / "out" / "g.jsonl").read_text().splitlines()]
    assert group["scores"] == [1.0, 1.0]
    viewed = run(installed, "hermes-envs", "view", "out/g.jsonl", cwd=folder)
    assert viewed.returncode == 0 and (folder / "out" / "g.view.html").is_file()

    (folder / "test_sums.py").write_text(PLUGIN_TEST, encoding="utf-8")
    plugin = run(
        installed, "python", "-m", "pytest", "-p", "no:cacheprovider", "-v", "test_sums.py",
        "--hermes-conformance", "sums_env.py", "--hermes-select", "HC1", cwd=folder,
    )  # fmt: skip
    assert plugin.returncode == 0, plugin.stdout[-3000:] + plugin.stderr[-2000:]
    assert "test_sums.py::test_fake_openai_fixture PASSED" in plugin.stdout  # the fixture, from the wheel
    assert "sums_env.py::ArithmeticTerminalEnv::HC101-imports-offline PASSED" in plugin.stdout  # the checks
