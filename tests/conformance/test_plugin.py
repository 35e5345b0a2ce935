"""The pytest plugin: ``--hermes-conformance PATH...`` collects one item per check and reports findings."""

from __future__ import annotations

import json
from pathlib import Path

import atroposlib.envs.base  # noqa: F401  (imported before pytester's module snapshot: numpy loads once)
import pytest

import hermes_envs.conformance.checks
import hermes_envs.env  # noqa: F401
from hermes_envs.conformance import all_checks

#: Checks that run only under --hermes-thorough (skipped in a default run).
THOROUGH = sum(c.thorough for c in all_checks())
#: The checks of the HC1 family (loading the env file), which a test about collection selects.
HC1 = sum(c.id.startswith("HC1") for c in all_checks())
#: Checks that do not apply to the example env (an agent env without a judge), reported as skipped: HC506 (a judge
#: outage), HC507 (cut-off completions of a raw env), HC414 (its reward credits no tool call: no transcript's score
#: rests on its calls), HC904 (a raw env running the model's code), HC905 and HC605 (tools of the env's own: it has
#: none), HC715 (a resumed checkpoint: it overrides no save_checkpoint), HC415 (a forged program: its answers are
#: numbers, not programs).
NOT_APPLICABLE = 8

pytest_plugins = ["pytester"]

EXAMPLE = (Path(__file__).parents[2] / "environments" / "arithmetic_env.py").read_text()


def mutate(old: str, new: str) -> str:
    assert old in EXAMPLE, old
    return EXAMPLE.replace(old, new)


@pytest.fixture
def run(pytester: pytest.Pytester):
    """An in-process pytest run in pytester's folder. A test about one check selects its family
    (``--hermes-select``): the whole catalogue runs in test_correct_env_passes_every_check."""

    def go(*args: str) -> pytest.RunResult:
        return pytester.runpytest(
            "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function", *args
        )

    return go


def test_correct_env_passes_every_check(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(good_env=EXAMPLE)
    result = run("--hermes-conformance", "good_env.py", "-v")
    # (it failed once on a loaded machine with counts only: say which check failed, and why)
    assert result.ret == 0, "\n".join(
        [ln for ln in result.outlines if "FAILED" in ln or "error" in ln.lower()][:60]
    )
    # every check of the catalogue is an item and passes; HC503 (slow) is skipped unless --hermes-slow, and the
    # costly oracles unless --hermes-thorough
    result.assert_outcomes(
        passed=len(all_checks()) - 1 - THOROUGH - NOT_APPLICABLE, skipped=1 + THOROUGH + NOT_APPLICABLE
    )
    result.stdout.fnmatch_lines(
        [
            "*good_env.py::ArithmeticTerminalEnv::HC101-imports-offline PASSED*",
            "*HC401-result-is-object PASSED*",
        ]
    )


def test_alone_it_does_not_run_the_projects_own_tests(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(good_env=EXAMPLE, test_project="def test_fails():\n    assert False\n")
    result = run("--hermes-conformance", "good_env.py", "--hermes-select", "HC1")
    assert result.ret == 0
    assert "test_fails" not in result.stdout.str()


def test_with_explicit_paths_both_run(pytester: pytest.Pytester, run) -> None:
    """The project's own test and the checks are collected and run side by side. One family of checks is enough to
    show it (the whole catalogue on this env is test_correct_env_passes_every_check)."""
    pytester.makepyfile(good_env=EXAMPLE, test_project="def test_ok():\n    assert True\n")
    result = run("test_project.py", "--hermes-conformance", "good_env.py", "--hermes-select", "HC1", "-v")
    result.assert_outcomes(passed=HC1 + 1)  # the HC1 checks and test_ok
    result.stdout.fnmatch_lines(["*test_project.py::test_ok PASSED*"])
    result.stdout.fnmatch_lines(["*good_env.py::ArithmeticTerminalEnv::HC101-imports-offline PASSED*"])


REGISTERS_AT_IMPORT = """
from hermes_envs.env import register_distribution
from hermes_envs.parsers import ToolCallParser, register_parser
from hermes_envs.tools import tool


@register_parser("reimport_fmt")
class ReimportParser(ToolCallParser):
    def parse(self, text, tools=None):
        return text, None


@tool(toolset="reimport_units")
def reimport_double(x: float) -> float:
    \"\"\"Double a number.\"\"\"
    return 2 * x


register_distribution("reimport-dist", {"terminal": 1.0})


class ArithmeticTerminalEnv("""


@pytest.fixture
def scratch_registries(monkeypatch):
    """The in-process pytester run registers a parser, a tool and a distribution: keep them out of other tests."""
    from hermes_envs.env import distributions
    from hermes_envs.parsers import base
    from hermes_envs.tools import registry

    with base.PARSERS.isolated(), registry.isolated(), distributions.DISTRIBUTIONS.isolated():
        yield


def test_env_registering_things_imported_by_a_project_test_too(
    pytester: pytest.Pytester, run, scratch_registries
) -> None:
    # --hermes-conformance imports the env under a module name of its own, the project's test as `good_env`: the
    # module-level registrations run twice, and must not fail HC101 as duplicates.
    pytester.makepyfile(
        good_env=mutate("\nclass ArithmeticTerminalEnv(", REGISTERS_AT_IMPORT),
        test_project=(
            "from good_env import ArithmeticTerminalEnv, reimport_double\n\n\n"
            "def test_tool():\n    assert reimport_double(2.0) == 4.0\n"
        ),
    )
    # HC1 is the family that imports the env (HC101 failed on the second registration); the other families run
    # on the imported class and are covered by test_correct_env_passes_every_check.
    result = run("test_project.py", "--hermes-conformance", "good_env.py", "--hermes-select", "HC1")
    result.assert_outcomes(passed=HC1 + 1)  # the HC1 checks and test_tool


def test_dict_access_on_agent_result_is_explained(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(
        bad_env=mutate("text = self._final_answer(result)", 'text = result["final_response"]')
    )
    result = run("--hermes-conformance", "bad_env.py", "--hermes-select", "HC401")
    assert result.ret == 1
    out = result.stdout.str()
    assert "FAILED bad_env.py::ArithmeticTerminalEnv::HC401-result-is-object" in out
    assert "AgentResult is a dataclass, not a dict" in out and "Fix:" in out
    assert "bad_env.py:" in out  # points at the author's line


def test_single_server_config_is_caught(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(bad_env=mutate("        return config, servers", "        return config, servers[0]"))
    result = run("--hermes-conformance", "bad_env.py", "--hermes-select", "HC1")
    result.stdout.fnmatch_lines(["*HC104*should return a LIST of APIServerConfig*"])
    assert result.ret == 1


def test_sync_setup_is_caught(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(bad_env=mutate("    async def setup(self) -> None:", "    def setup(self) -> None:"))
    result = run("--hermes-conformance", "bad_env.py", "--hermes-select", "HC1")
    result.stdout.fnmatch_lines(["*HC103*setup should be `async def`*"])


def test_missing_eval_split_is_caught(pytester: pytest.Pytester, run) -> None:
    src = mutate(
        "        self._eval_items = items[:eval_size]\n        self._items = items[eval_size:]",
        "        self._eval_items = []\n        self._items = items",
    )
    pytester.makepyfile(bad_env=src)
    result = run("--hermes-conformance", "bad_env.py", "--hermes-select", "HC2")
    result.stdout.fnmatch_lines(["*HC202*made no model request at all*"])


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("class Broken(:\n    pass\n", "*HC101*syntax error at line 1*"),
        ("import not_a_real_package_xyz\n", "*HC101*importing module 'not_a_real_package_xyz' failed*"),
        ("raise RuntimeError('boom at import')\n", "*HC101*raised RuntimeError: boom at import*line 1*"),
        ("x = 1\n", "*HC102*should define a class deriving from HermesAgentBaseEnv*"),
    ],
)
def test_unloadable_file_gets_one_clear_finding(
    pytester: pytest.Pytester, run, source: str, expected: str
) -> None:
    pytester.makepyfile(broken_env=source)
    result = run("--hermes-conformance", "broken_env.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines([expected])
    out = result.stdout.str()
    assert "Traceback" not in out and out.count("FAILED") == 1


def test_folder_and_class_selection(pytester: pytest.Pytester, run) -> None:
    envs = pytester.mkdir("envs")
    (envs / "a_env.py").write_text(EXAMPLE)
    (envs / "notes.py").write_text("x = 1\n")  # not an env file: not collected
    result = run("--hermes-conformance", "envs", "--collect-only", "-q")
    out = result.stdout.str()
    assert "a_env.py::ArithmeticTerminalEnv::HC101-imports-offline" in out and "notes.py" not in out
    result = run("--hermes-conformance", "envs/a_env.py::ArithmeticTerminalEnv", "--hermes-select", "HC1")
    result.assert_outcomes(passed=9)


def test_select_ignore_and_json_report(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(good_env=EXAMPLE)
    pytester.makepyprojecttoml('[tool.hermes-conformance]\nignore = ["HC105", "HC106"]\n')
    result = run(
        "--hermes-conformance", "good_env.py", "--hermes-select", "HC1", "--hermes-report", "out/r.json"
    )
    result.assert_outcomes(passed=7)
    report = json.loads((pytester.path / "out" / "r.json").read_text())
    assert not report["failed"] and [c["id"] for c in report["envs"][0]["checks"]] == [
        "HC101",
        "HC102",
        "HC103",
        "HC104",
        "HC107",
        "HC108",
        "HC109",
    ]


def test_unknown_check_id_in_config_is_a_usage_error(pytester: pytest.Pytester, run) -> None:
    pytester.makepyfile(good_env=EXAMPLE)
    result = run("--hermes-conformance", "good_env.py", "--hermes-ignore", "HC999")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*should name check ids*HC999*"])


def test_missing_path_is_a_usage_error(pytester: pytest.Pytester, run) -> None:
    result = run("--hermes-conformance", "nope.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'nope.py' should be an env file or a folder*"])


# The report under xdist (every worker's envs, checks in order): tests/docs/test_ci.py, on the documented parallel
# command's run, against the workflow step's serial report.
