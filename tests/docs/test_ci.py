"""docs/ci.md: the GitHub Actions workflow and the pre-commit hook gate on the conformance run — run their commands."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .test_snippets import ROOT, blocks

WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"
TEMPLATE = ROOT / ".github" / "workflow-templates" / "hermes-conformance.yml"
BIN = Path(sys.executable).parent


def _environ() -> dict[str, str]:
    from hermes_envs.testing.offline import offline_environ

    return {**os.environ, **offline_environ()}


def _run(command: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A documented command with ``python`` / ``hermes-envs`` / ``.venv/bin/...`` resolved to this venv."""
    argv = shlex.split(command)
    if argv[0] == "python" or argv[0].endswith("/python"):
        argv[0] = sys.executable
    elif argv[0].startswith(".venv/bin/") or "/" not in argv[0]:
        argv[0] = str(BIN / Path(argv[0]).name)
    return subprocess.run(
        argv, cwd=cwd, env=_environ(), capture_output=True, text=True, timeout=timeout, check=False
    )


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def step(name: str) -> dict:
    return next(s for s in workflow()["jobs"]["conformance"]["steps"] if s.get("name") == name)


def hook() -> dict:
    """The guide's pre-commit hook: the one ``repo: local`` hook of docs/ci.md."""
    (config,) = [yaml.safe_load(b) for b in blocks("docs/ci.md", "yaml") if "repos:" in b]
    (repo,) = config["repos"]
    (only,) = repo["hooks"]
    assert repo["repo"] == "local"
    return only


def tracked_files(folder: str) -> list[str]:
    """The files git tracks under ``folder`` (what pre-commit passes to hooks; an untracked scratch file a developer
    left in ``environments/`` must not change the test)."""
    done = subprocess.run(
        ["git", "ls-files", "--", folder], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"not a git checkout: {done.stderr.strip()}")
    return sorted(done.stdout.split())


def hook_files() -> list[str]:
    """The files pre-commit would pass to the hook: tracked env files matching files/exclude."""
    h = hook()
    return [
        p
        for p in tracked_files("environments")
        if re.search(h["files"], p) and not re.search(h["exclude"], p)
    ]


def test_the_guide_shows_the_workflow_template_verbatim() -> None:
    assert TEMPLATE.read_text(encoding="utf-8") in [b for b in blocks("docs/ci.md", "yaml")]


def _version() -> str:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def _published_texts() -> dict[str, str]:
    """What a newcomer reads or copies: README, the guides, pyproject, the workflow files."""
    paths = [ROOT / "README.md", ROOT / "pyproject.toml", *sorted((ROOT / "docs").rglob("*.md"))]
    paths += sorted((ROOT / ".github").rglob("*.yml"))
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def test_no_document_names_a_repository_address_or_tag_that_does_not_exist() -> None:
    """No public repository or release exists yet (issue #27's decision): no git+ URL, no release tag, no
    [project.urls]; installs go through a clone, the wheel of `make dist`, or the package name alone."""
    for name, text in _published_texts().items():
        for bad in ("github.com/hermes-envs", "git+https://", f"@v{_version()}", f"rev: v{_version()}"):
            assert bad not in text, f"{name} names {bad!r}"
    assert "[project.urls]" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert not (ROOT / ".pre-commit-hooks.yaml").exists()  # a remote hook repository needs an address


def test_install_story_is_a_clone_or_the_wheel_of_make_dist() -> None:
    wheel = f"hermes_envs-{_version()}-py3-none-any.whl"
    install = blocks("docs/ci.md", "bash")[0]
    assert "python -m pip install ./hermes-envs" in install and "make dist" in install
    assert f"python -m pip install dist/{wheel}" in install
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make dist" in readme and wheel in readme and "pip install hermes-envs` works" in readme
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^dist: ", makefile, re.M) and "-m build --no-isolation --outdir dist ." in makefile


def test_the_template_installs_one_configurable_spec_defaulting_to_the_package_name() -> None:
    template = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))["jobs"]["conformance"]
    assert template["env"]["HERMES_ENVS"] == "${{ vars.HERMES_ENVS_SPEC || 'hermes-envs' }}"
    (install,) = [s for s in template["steps"] if s.get("name") == "Install hermes-envs"]
    assert install["run"] == 'python -m pip install "$HERMES_ENVS"'
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert f"HERMES_ENVS_SPEC=./ci/hermes_envs-{_version()}-py3-none-any.whl" in text
    # the template differs from this repository's own workflow only in how hermes-envs is installed
    own = workflow()["jobs"]["conformance"]
    assert [s.get("run") for s in own["steps"] if s.get("name") == "Conformance"] == [
        s.get("run") for s in template["steps"] if s.get("name") == "Conformance"
    ]


def test_workflow_gates_pull_requests_offline() -> None:
    wf = workflow()
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert "pull_request" in triggers
    job = wf["jobs"]["conformance"]
    assert job["env"] == {"HF_HUB_OFFLINE": "1", "WANDB_MODE": "disabled"}
    assert "--hermes-conformance environments/" in step("Conformance")["run"]
    assert step("Upload the report")["if"] == "always()"


def test_the_pre_commit_recipe_is_a_local_hook_running_the_installed_command() -> None:
    h = hook()
    assert h["language"] == "system" and h["entry"] == "hermes-envs check --no-env-ok"
    assert h["require_serial"] is True


def test_hook_files_ignore_untracked_files(tmp_path: Path) -> None:
    scratch = ROOT / "environments" / f"zz_untracked_{os.getpid()}_env.py"
    scratch.write_text("class ScratchEnv(object):\n    pass\n", encoding="utf-8")
    try:
        assert str(scratch.relative_to(ROOT)) not in hook_files()
    finally:
        scratch.unlink()


def test_hook_selects_the_example_envs_only() -> None:
    assert hook_files() == [
        "environments/arithmetic_env.py",
        "environments/file_task_env.py",
        "environments/judge_env.py",
    ]


@pytest.mark.slow
def test_hook_passes_on_good_envs_and_blocks_a_broken_one(tmp_path: Path) -> None:
    entry = hook()["entry"]
    # file_task_env and judge_env pass the whole catalogue: tests/examples relies on this run for file_task_env
    good = _run(f"{entry} {' '.join(hook_files()[1:])}")
    assert good.returncode == 0, good.stdout[-4000:] + good.stderr[-2000:]

    broken = tmp_path / "environments" / "broken_env.py"
    broken.parent.mkdir()
    source = (ROOT / "environments" / "judge_env.py").read_text(encoding="utf-8")
    broken.write_text(
        source.replace("reversed(result.messages)", 'reversed(result["messages"])'), encoding="utf-8"
    )
    assert re.search(hook()["files"], "environments/broken_env.py")
    helper = tmp_path / "environments" / "scoring_helpers.py"  # a helper module: no env class
    helper.write_text("def clamp(x: float) -> float:\n    return min(1.0, max(0.0, x))\n", encoding="utf-8")
    assert re.search(hook()["files"], "environments/scoring_helpers.py")
    bad = _run(f"{entry} environments/broken_env.py environments/scoring_helpers.py", cwd=tmp_path)
    assert bad.returncode == 1, bad.stdout[-4000:] + bad.stderr[-2000:]
    assert "FAILED         HC401" in bad.stdout and "result['messages'] does not work" in bad.stdout
    assert "scoring_helpers" not in bad.stdout  # the helper is skipped, not failed as HC102
    alone = _run(f"{entry} environments/scoring_helpers.py", cwd=tmp_path)  # a commit of the helper alone
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-2000:]


def test_documented_local_commands_are_the_tested_ones() -> None:
    shell = "\n".join(blocks("docs/ci.md", "bash"))
    assert (
        step("Conformance")["run"].replace("python -m", ".venv/bin/python -m").split(" --hermes-report")[0]
        in shell
    )
    assert f".venv/bin/{hook()['entry']} environments/file_task_env.py environments/judge_env.py" in shell
    assert shutil.which("hermes-envs", path=str(BIN))


def _report_rows(markdown: str) -> dict[str, list[tuple[str, str, str]]]:
    """{env label: [(check id, title, status), ...]} from a Markdown conformance report."""
    rows: dict[str, list[tuple[str, str, str]]] = {}
    env = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            env = rows.setdefault(line[3:].strip(), [])
        elif env is not None and re.match(r"\| HC\d+ ", line):
            check, status = (cell.strip() for cell in line.strip("|").split(" | ")[:2])
            env.append((check.split(" ", 1)[0], check.split(" ", 1)[1], status))
    return rows


@pytest.mark.slow  # two conformance runs of the example envs in pytest subprocesses, one of them on two workers
def test_workflow_step_and_parallel_command_pass_and_report_alike(tmp_path: Path) -> None:
    """The workflow's Conformance step (serial) and the guide's parallel command both pass on environments/, and
    the parallel run's report (``--hermes-report``, which the guides say works under xdist too) holds every env of
    the serial one, with the same checks, titles and statuses, and real timings.

    One test on purpose: it replaces four that ran six pytest sessions for these facts (the workflow step, the
    parallel command, a serial and a parallel report run in tests/docs/test_report_under_xdist.py, and the xdist
    report run of tests/conformance/test_plugin.py)."""
    command = step("Conformance")["run"].replace("conformance-report.md", str(tmp_path / "report.md"))
    serial = _run(command)
    assert serial.returncode == 0, serial.stdout[-4000:] + serial.stderr[-2000:]
    markdown = (tmp_path / "report.md").read_text()
    assert "| HC401" in markdown

    (parallel_command,) = [
        c.split("  #")[0].strip()
        for b in blocks("docs/ci.md", "bash")
        for c in b.splitlines()
        if " -n 2 " in c
    ]
    parallel = _run(f"{parallel_command} --hermes-report {tmp_path / 'parallel.json'}")
    assert parallel.returncode == 0, parallel.stdout[-4000:] + parallel.stderr[-2000:]
    assert "2 workers" in parallel.stdout and " failed" not in parallel.stdout

    serial_rows = _report_rows(markdown)
    report = json.loads((tmp_path / "parallel.json").read_text())
    assert [e["env"] for e in report["envs"]] == list(serial_rows) and len(serial_rows) == 3
    for env in report["envs"]:
        assert env["seconds"] > 0.0, env["env"]
        got = [(c["id"], c["title"], c["status"]) for c in env["checks"]]
        assert got == serial_rows[env["env"]], env["env"]  # the catalogue's order, every check, same outcome
        assert {"HC101", "HC202", "HC401"} <= {c["id"] for c in env["checks"]}
        titles = {c["id"]: c["title"] for c in env["checks"]}
        assert titles["HC401"] == "compute_reward uses AgentResult as an object"


def test_the_guide_says_when_parallel_conformance_pays_off() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "When parallel pays off" in text and "and 10.9 s with `-n 2`" in text
    assert "bench/parallel_conformance.py" in text and (ROOT / "bench" / "parallel_conformance.py").is_file()
    assert "pays off only for many envs" in (ROOT / "docs" / "testing-your-env.md").read_text(
        encoding="utf-8"
    )
