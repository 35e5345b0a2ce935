"""`hermes-envs check` and `pytest --hermes-conformance` agree: same env classes, same checks, same exit codes,
and messages worded for the tool that was run."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import atroposlib.envs.base  # noqa: F401  (imported before pytester's module snapshot: numpy loads once)
import pytest

from hermes_envs.cli import main
from hermes_envs.testing.offline import offline_environ

ROOT = Path(__file__).parents[2]
pytest_plugins = ["pytester"]

TWO_CLASSES = """
from environments.arithmetic_env import ArithmeticTerminalEnv


class FirstEnv(ArithmeticTerminalEnv):
    name = "first"


class SecondEnv(ArithmeticTerminalEnv):
    name = "second"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        return config, servers[0]          # HC104: not a list
"""


@pytest.fixture
def both(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]):
    """``both(*cli_args, plugin_args=(...))`` -> (exit code, stdout, stderr) of ``hermes-envs check`` and the pytest
    run, both in this process and in pytester's folder. In-process on purpose: what is compared is the two front
    ends' logic; the console script and ``pytest --hermes-conformance`` run as subprocesses in tests/docs and
    tests/packaging."""

    def go(*cli_args: str, plugin_args: tuple[str, ...]) -> tuple[tuple[int, str, str], pytest.RunResult]:
        capsys.readouterr()
        code = main(["check", *cli_args])
        out = capsys.readouterr()
        plugin = pytester.runpytest(
            "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function", "-v", *plugin_args
        )
        return (code, out.out, out.err), plugin

    return go


@pytest.mark.slow  # two conformance runs of two classes (HC10 only)
def test_check_runs_every_env_class_of_a_file_like_the_plugin(pytester: pytest.Pytester, both) -> None:
    pytester.makepyfile(two_envs=TWO_CLASSES)
    (code, cli_out, cli_err), plugin = both(
        "two_envs.py",
        "--select",
        "HC10",
        plugin_args=("--hermes-conformance", "two_envs.py", "--hermes-select", "HC10"),
    )
    plugin_out = plugin.stdout.str()
    assert code == plugin.ret == 1, cli_out + cli_err + plugin_out

    # the CLI: one block per class, "two_envs.py::FirstEnv  (1.2 s)" then one line per check
    cli_items = set()
    for block in re.split(r"^(?=two_envs\.py::)", cli_out, flags=re.M):
        if block.startswith("two_envs.py::"):
            cls = block[len("two_envs.py::") :].split()[0]
            cli_items |= {(s, cls, hc) for s, hc in re.findall(r"^  ([A-Z_]+)\s+(HC\d+) ", block, re.M)}
    # the plugin (-v): "two_envs.py::FirstEnv::HC104-config-init-list PASSED", one item per check and class
    plugin_items = {
        (s, c, hc)
        for c, hc, s in re.findall(r"two_envs\.py::(\w+)::(HC\d+)-\S+ (PASSED|FAILED|SKIPPED)", plugin_out)
    }
    assert {c for _, c, _ in cli_items} == {"FirstEnv", "SecondEnv"}
    assert {(c, hc) for _, c, hc in plugin_items} == {(c, hc) for _, c, hc in cli_items}
    assert {(c, hc) for s, c, hc in cli_items if s == "FAILED"} == {("SecondEnv", "HC104")}
    assert {(c, hc) for s, c, hc in plugin_items if s == "FAILED"} == {("SecondEnv", "HC104")}


def test_a_folder_without_envs_says_no_environment_found_in_both(pytester: pytest.Pytester, both) -> None:
    notes = pytester.mkdir("notes")
    (notes / "helpers.py").write_text("def helper():\n    return 1\n")
    (code, _, cli_err), plugin = both("notes", plugin_args=("--hermes-conformance", "notes"))
    assert code == plugin.ret == 5
    assert "no environment found in notes" in cli_err
    assert "no environment found in notes" in plugin.stdout.str()


def test_check_exit_codes_follow_pytest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing_env.py")]) == 4  # pytest: a usage error
    err = capsys.readouterr().err
    assert err.startswith("hermes-envs check: path ") and "relative to the current folder" in err
    assert err.count("hermes-envs check") == 1  # not "hermes-envs check: hermes-envs check path ..."
    assert "where you run pytest" not in err and "--hermes-conformance" not in err
    (tmp_path / "notes.py").write_text("x = 1\n")
    assert main(["check", str(tmp_path)]) == 5  # pytest: nothing collected
    assert "no environment found" in capsys.readouterr().err


def test_no_silence_advice_after_a_syntax_error_or_a_wrong_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken_env.py"
    broken.write_text("class BrokenEnv(BaseEnv):\n    def f(:\n        pass\n")
    assert main(["check", str(broken), "--select", "HC1"]) == 1
    out = capsys.readouterr().out
    assert "HC101 (error)" in out and "syntax error at line 2" in out and "Silence" not in out

    example = ROOT / "environments" / "arithmetic_env.py"
    assert main(["check", f"{example}::NoSuchEnv", "--select", "HC1"]) == 1
    out = capsys.readouterr().out
    assert "should define env class 'NoSuchEnv'" in out and "Silence" not in out

    # a real check keeps its silence line
    bad = tmp_path / "bad_env.py"
    bad.write_text(
        example.read_text().replace("        return config, servers", "        return config, servers[0]")
    )
    assert main(["check", str(bad), "--select", "HC104"]) == 1
    assert 'Silence: add "HC104"' in capsys.readouterr().out


def test_check_keeps_library_prints_out_of_the_report_unless_verbose(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = str(ROOT / "environments" / "arithmetic_env.py")
    assert main(["check", example, "--select", "HC703"]) == 0
    out = capsys.readouterr()
    assert "PASSED         HC703" in out.out
    assert "Evaluation Results" not in out.out + out.err  # atroposlib's eval table, printed by evaluate()
    assert main(["check", example, "--select", "HC703", "-v"]) == 0
    assert "Evaluation Results" in capsys.readouterr().out


def test_check_in_process_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    # main() freezes what its imports create (a faster check); called from another program it must give them
    # back, or that program's objects alive at the time would never be collected again.
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert main(["check", str(tmp_path / "missing_env.py")]) == 4
    assert gc.isenabled() and gc.get_freeze_count() == 0


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`hermes-envs check ARGS` as a user runs it, in a fresh interpreter started in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "hermes_envs.cli", "check", *args],
        cwd=cwd,
        env={**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.slow  # the reward checks up to HC412 in a subprocess
def test_check_writes_nothing_into_the_folder_it_runs_in(tmp_path: Path) -> None:
    # HC412's hypothesis search used to cache the constants of every local module under ./.hypothesis/
    done = _cli(str(ROOT / "environments" / "arithmetic_env.py"), "--select", "HC412", cwd=tmp_path)
    assert "PASSED         HC412" in done.stdout, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_named_helper_module_holds_no_environment_in_both(
    pytester: pytest.Pytester, both, capsys: pytest.CaptureFixture[str]
) -> None:
    """A .py file without an env class, named on the command line (as pre-commit names every changed file), is
    "no environment found" (5) in both front ends, not an HC102 failure (1)."""
    pytester.makepyfile(helpers="def helper():\n    return 1\n")
    (code, cli_out, cli_err), plugin = both("helpers.py", plugin_args=("--hermes-conformance", "helpers.py"))
    assert code == plugin.ret == 5, cli_out + cli_err + plugin.stdout.str()
    assert "HC102" not in cli_out and "no environment found in helpers.py" in cli_err
    assert (
        main(["check", "--no-env-ok", "helpers.py"]) == 0
    )  # the pre-commit hook's form lets the commit through
    assert "Nothing to check (--no-env-ok)" in capsys.readouterr().err


def test_a_folder_with_tests_but_no_env_exits_5_in_both(pytester: pytest.Pytester, both) -> None:
    """The folder's own test passes, but the gate checked no environment: 5 in both, not 0 from pytest."""
    folder = pytester.mkdir("envs")
    (folder / "test_helpers.py").write_text("def test_ok():\n    assert True\n")
    (code, _, cli_err), plugin = both("envs", plugin_args=("--hermes-conformance", "envs"))
    assert "no environment found in envs" in cli_err
    assert code == plugin.ret == 5, plugin.stdout.str()


def test_usage_errors_exit_4_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["check"], ["check", "x.py", "--no-such-option"], ["no-such-command"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 4, argv
        assert "error:" in capsys.readouterr().err


def test_a_bad_select_on_the_command_line_is_not_blamed_on_pyproject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sums_env.py").write_text((ROOT / "environments" / "arithmetic_env.py").read_text())
    monkeypatch.chdir(tmp_path)
    assert main(["check", "sums_env.py", "--select", "HC999"]) == 4
    err = capsys.readouterr().err
    assert "the command line's select (--select" in err and "[tool.hermes-conformance]" not in err
    (tmp_path / "pyproject.toml").write_text('[tool.hermes-conformance]\nignore = ["HC998"]\n')
    assert main(["check", "sums_env.py"]) == 4
    assert "[tool.hermes-conformance] ignore should name check ids" in capsys.readouterr().err


def test_check_refuses_a_report_path_that_is_one_of_its_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester
) -> None:
    source = (ROOT / "environments" / "arithmetic_env.py").read_text()
    victim = tmp_path / "victim_env.py"
    victim.write_text(source)
    assert main(["check", str(victim), "--report", str(victim)]) == 4
    assert "would overwrite it" in capsys.readouterr().err
    assert victim.read_text() == source  # the env's source is intact
    written = pytester.makepyfile(victim_env=source).read_text()
    plugin = pytester.runpytest(
        "-p", "no:cacheprovider", "--hermes-conformance", "victim_env.py", "--hermes-report", "victim_env.py"
    )
    assert plugin.ret == 4 and "would overwrite it" in plugin.stderr.str()
    assert (pytester.path / "victim_env.py").read_text() == written


def test_check_closes_with_a_summary_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken_env.py"
    broken.write_text(
        (ROOT / "environments" / "arithmetic_env.py")
        .read_text()
        .replace("        return config, servers", "        return config, servers[0]")
    )
    assert main(["check", str(broken), "--select", "HC10"]) == 1
    lines = capsys.readouterr().out.rstrip().splitlines()
    statuses = [m.group(1) for line in lines if (m := re.match(r"  ([A-Z_]+)\s+HC\d+ ", line))]
    summary = re.fullmatch(
        r"== (\d+) failed, (\d+) warned, (\d+) passed, (\d+) skipped \(1 env\) in \d+\.\d s ==", lines[-1]
    )
    assert summary, lines[-1]
    failed, warned, passed, skipped = (int(g) for g in summary.groups())
    assert failed == statuses.count("FAILED") >= 1 and passed == statuses.count("PASSED") >= 1
    assert warned == statuses.count("WARNED")
    assert skipped == statuses.count("SKIPPED") + statuses.count("NOT_APPLICABLE")
    assert failed + warned + passed + skipped == len(statuses)


@pytest.mark.slow  # a conformance run through pytester (HC1 and HC2 only)
@pytest.mark.parametrize(
    "contain", ["true", "false"]
)  # the env run in its container (default), or in-process
def test_pytest_report_holds_the_timings_as_checks_report_does(
    pytester: pytest.Pytester, contain: str
) -> None:
    import json

    pytester.makepyfile(sums_env=(ROOT / "environments" / "arithmetic_env.py").read_text())
    plugin = pytester.runpytest(
        "-p", "no:cacheprovider", "--hermes-conformance", "sums_env.py", "--hermes-select", "HC1,HC2",
        "--hermes-report", "r.json", "--hermes-set", f"contain={contain}",
    )  # fmt: skip
    assert plugin.ret == 0, plugin.stdout.str()
    (env,) = json.loads((pytester.path / "r.json").read_text())["envs"]
    assert {"import", "setup"} <= set(env["timings"]), env["timings"]
    assert all(v >= 0 for v in env["timings"].values())


UNFINISHED_BASE = """
from environments.hermes_base_env import HermesAgentBaseEnv


class ToolsBase(HermesAgentBaseEnv):
    def format_prompt(self, item):
        return item["q"]
"""

ENV_ON_THAT_BASE = """
from base_helpers import ToolsBase


class Mine(ToolsBase):
    name = "mine"

    async def setup(self):
        pass

    async def get_next_item(self):
        return {"q": "1+1", "a": "2"}

    async def compute_reward(self, item, result, ctx):
        return 1.0

    async def evaluate(self, *args, **kwargs):
        pass
"""


def test_a_folder_finds_an_env_on_a_shared_base_and_skips_the_unfinished_base(
    pytester: pytest.Pytester, both
) -> None:
    """`class Mine(ToolsBase)` (a base not named *Env, from another file) is an env of the folder; the file holding
    only the unfinished ToolsBase is a helper module, not an env to fail on methods it leaves to subclasses."""
    folder = pytester.mkdir("envs")
    (folder / "base_helpers.py").write_text(UNFINISHED_BASE)
    (folder / "mine.py").write_text(ENV_ON_THAT_BASE)
    (code, cli_out, cli_err), plugin = both(
        "envs", "--select", "HC105", plugin_args=("--hermes-conformance", "envs", "--hermes-select", "HC105")
    )
    plugin_out = plugin.stdout.str()
    assert code == plugin.ret == 0, cli_out + cli_err + plugin_out
    assert "mine.py::Mine" in cli_out and "mine.py::Mine::HC105" in plugin_out
    assert "base_helpers.py" not in cli_out + cli_err and "base_helpers.py" not in plugin_out
