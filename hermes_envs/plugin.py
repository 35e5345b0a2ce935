"""The pytest plugin (entry point ``hermes_envs``): fixtures, and ``--hermes-conformance PATH...``.

Thin hooks that delegate: fixtures live in :mod:`hermes_envs.testing`, the collection nodes of the conformance checks
in :mod:`hermes_envs.conformance._pytest_items`, the checks in :mod:`hermes_envs.conformance`. The plugin sits above
both (core <- testing <- conformance <- plugin/CLI), so neither imports it. Loading this plugin imports nothing heavy
(no atroposlib, no transformers): those are imported inside hooks only when ``--hermes-conformance`` is given. State
lives in ``config.stash``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.conformance._stash import OUTCOMES, SETTINGS, TARGETS
from hermes_envs.testing._fixtures import fake_http, fake_openai, fake_openai_session  # noqa: F401  (fixtures)
from hermes_envs.testing._replay_fixtures import (  # noqa: F401  (fixtures)
    hermes_cassette,
    hermes_cassette_path,
    hermes_provider,
    hermes_record_mode,
    recorded_rollouts,
    reward_snapshot,
    transcript_snapshot,
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hermes-envs", "hermes-envs: environment conformance")
    group.addoption(
        "--hermes-conformance",
        action="extend",
        nargs="+",
        default=None,
        metavar="PATH",
        dest="hermes_conformance",
        help="run the conformance checks on env files or folders (PATH::ClassName picks one class). "
        "Given without other paths, only the conformance checks run.",
    )
    group.addoption(
        "--hermes-report",
        default=None,
        metavar="PATH",
        help="write the conformance report to PATH (.json for JSON, anything else Markdown).",
    )
    group.addoption(
        "--hermes-select",
        default=None,
        metavar="IDS",
        help="comma-separated check ids or prefixes to run (e.g. HC1,HC401); overrides pyproject.",
    )
    group.addoption(
        "--hermes-ignore",
        default=None,
        metavar="IDS",
        help="comma-separated check ids or prefixes to skip; overrides pyproject.",
    )
    group.addoption(
        "--hermes-set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="override one [tool.hermes-conformance] setting, e.g. --hermes-set control_ceiling=0.3 "
        "(repeatable; the command line wins over pyproject).",
    )
    group.addoption(
        "--hermes-slow",
        action="store_true",
        default=None,
        help="also run the slow conformance checks (HC503: a one-step `process` run).",
    )
    group.addoption(
        "--hermes-items",
        default=None,
        metavar="FILE.jsonl",
        help="items (one JSON object a line) the conformance checks run on when setup() cannot load the env's own "
        "data offline (a Hub dataset); findings made on them say so.",
    )
    group.addoption(
        "--hermes-env-set",
        action="append",
        default=None,
        metavar="FIELD=VALUE",
        help="set an env config field for the conformance run, as `process --env.FIELD VALUE` does, e.g. "
        "--hermes-env-set dataset_name=data/train.jsonl (repeatable).",
    )
    group.addoption(
        "--hermes-config",
        default=None,
        metavar="FILE.yaml",
        help="a `process --config` YAML file whose env: section sets env config fields (--hermes-env-set wins).",
    )
    group.addoption(
        "--hermes-thorough",
        action="store_true",
        default=None,
        help="run the costlier conformance oracles in full (HC413 on every proven item, HC412 with 5x examples).",
    )
    from hermes_envs.testing._replay_fixtures import add_options

    add_options(group)


def _ids(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


#: The plugin's own fixtures and markers: a test that uses one runs its tool families (web, browser, vision ...) on
#: their offline fake backends; every other test of the session (an unrelated project's included) sees no change.
_FIXTURES = frozenset(
    {
        "fake_http",
        "fake_openai",
        "fake_openai_session",
        "hermes_cassette",
        "hermes_cassette_path",
        "hermes_provider",
        "hermes_record_mode",
        "recorded_rollouts",
        "reward_snapshot",
        "transcript_snapshot",
    }
)
_MARKERS = ("fake_openai", "hermes_cassette", "hermes_conformance")
_ALL_FAMILIES_VAR = (
    "HERMES_TOOL_BACKENDS"  # (hermes_envs.tools.toolsets reads it; importing that costs a load)
)
#: transformers says "PyTorch was not found" on import (atroposlib imports it); the tokenizer-only use never needs it.
_QUIET_TRANSFORMERS = {"TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
#: Variables set for the span of a test that uses the plugin (a value the user set already is left alone).
_TEST_ENVIRON = {_ALL_FAMILIES_VAR: "fake", **_QUIET_TRANSFORMERS}
_SESSION_ENVIRON = pytest.StashKey[dict[str, str | None]]()


def _set_unset(values: dict[str, str]) -> dict[str, str | None]:
    """Set each of ``values`` that ``os.environ`` lacks; the previous values of those set, for :func:`_restore`."""
    saved: dict[str, str | None] = {}
    for key, value in values.items():
        if key not in os.environ:
            saved[key] = None
            os.environ[key] = value
    return saved


def _restore(saved: dict[str, str | None]) -> None:
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _uses_hermes(item: pytest.Item) -> bool:
    return not _FIXTURES.isdisjoint(getattr(item, "fixturenames", ())) or any(
        item.get_closest_marker(m) for m in _MARKERS
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """For the span of a test that uses the plugin, tool families default to their fakes (an author's own
    HERMES_TOOL_BACKENDS or HERMES_<FAMILY>_BACKEND still wins) and transformers keeps its import notice to itself;
    restored after it, so nothing leaks into other tests or child processes started outside it."""
    if not _uses_hermes(item):
        yield
        return
    saved = _set_unset(_TEST_ENVIRON)
    try:
        yield
    finally:
        _restore(saved)


def _quiet_dependencies(config: pytest.Config) -> None:
    """Keep the libraries hermes-envs installs from adding noise to every run of the user's own tests.

    pytest-asyncio, a dependency of ours, warns on every run of a project that does not set
    ``asyncio_default_fixture_loop_scope``: it is given "function" (pytest-asyncio's own coming default) unless
    the project sets it. pytest has no public setter for an ini value; ``getini`` reads its ``_inicache`` first
    (what ``addinivalue_line`` edits), and any error leaves pytest-asyncio as it was. (No environment variable is
    set here: a session that uses none of the plugin's options or fixtures must see the environment it was given.)"""
    try:
        if config.getini("asyncio_default_fixture_loop_scope") is None:
            config._inicache["asyncio_default_fixture_loop_scope"] = "function"
    except (ValueError, AttributeError, TypeError):  # pytest-asyncio absent, or another pytest internals
        pass


@pytest.hookimpl(tryfirst=True)  # before pytest-asyncio's pytest_configure reads the ini value
def pytest_configure(config: pytest.Config) -> None:
    _quiet_dependencies(config)
    config.addinivalue_line(
        "markers", "fake_openai(script=None, policy=None, ...): configure the fake_openai fixture."
    )
    config.addinivalue_line("markers", "hermes_conformance: a conformance check item (one per check id).")
    config.addinivalue_line(
        "markers",
        "hermes_cassette(path=None, record_mode=None): cassette of this test "
        "(default cassettes/<module>/<test>.yaml beside the test file).",
    )
    targets = config.getoption("hermes_conformance", default=None)
    if not targets:
        return
    # the checks import atroposlib (and so transformers): quiet for this session only
    config.stash[_SESSION_ENVIRON] = _set_unset(_QUIET_TRANSFORMERS)
    from hermes_envs.conformance._runner import (
        discover,
        load_settings,
        parse_overrides,
        refuse_report_over_input,
    )
    from hermes_envs.errors import ConfigError

    try:
        if config.getoption("hermes_report"):
            refuse_report_over_input(config.getoption("hermes_report"), [str(t) for t in targets])
        settings = load_settings(
            Path(str(config.rootpath)),
            **parse_overrides(config.getoption("hermes_set", default=None)),
            select=_ids(config.getoption("hermes_select")),
            ignore=_ids(config.getoption("hermes_ignore")),
            slow=config.getoption("hermes_slow", default=None),
            env=parse_overrides(config.getoption("hermes_env_set", default=None)) or None,
            config=config.getoption("hermes_config", default=None),
            items=config.getoption("hermes_items", default=None),
            thorough=config.getoption("hermes_thorough", default=None),
        )
        found = discover(targets)
    except ConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SETTINGS] = settings
    config.stash[TARGETS] = {p.resolve(): name for p, name in found}
    collector = _OutcomeCollector()
    config.stash[OUTCOMES] = collector
    config.pluginmanager.register(collector, "hermes-conformance-outcomes")
    # The paths come in as an option value, so we hand them to pytest's collection ourselves. Alone, they replace
    # the default (testpaths / current folder), so the project's own tests are not run along with them.
    explicit = config.args_source is pytest.Config.ArgsSource.ARGS
    requested = [str(t) for t in targets]
    config.args = (list(config.args) + requested) if explicit else requested


def _conformance_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    targets = parent.config.stash.get(TARGETS, None)
    if targets and file_path.resolve() in targets:
        from hermes_envs.conformance._pytest_items import ConformanceFile

        return ConformanceFile.from_parent(parent, path=file_path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # Files given on the command line (or named like tests) go through pytest's Python collector, which asks
    # pytest_pycollect_makemodule below; answering here too would collect them twice.
    if parent.session.isinitpath(file_path) or any(
        file_path.match(p) for p in parent.config.getini("python_files")
    ):
        return None
    return _conformance_file(file_path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # An env file passed as a path must not also be imported as a test module (it is not one).
    return _conformance_file(module_path, parent)


class _OutcomeCollector:
    """Gathers conformance outcomes from test reports' user_properties, so the process that writes the report
    (the xdist controller, or the only process) sees every worker's outcomes."""

    def __init__(self) -> None:
        self.records: list[Any] = []  # (the user_properties the conformance items add: dicts)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.records.extend(value for key, value in report.user_properties if key == "hermes_conformance")


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    _spare_unused_hypothesis(config)
    if config.stash.get(TARGETS, None) == {} and session.exitstatus == pytest.ExitCode.OK:
        # --hermes-conformance named no env: exit as `hermes-envs check` does (5, "no environment found"), not
        # 0 for a gate that checked nothing.
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
    collector = config.stash.get(OUTCOMES, None)
    if collector is None or hasattr(config, "workerinput"):
        return  # not a conformance run, or an xdist worker (the controller writes the report)
    from hermes_envs.conformance._pytest_items import finish_report

    finish_report(config, collector.records, config.getoption("hermes_report"))


def _spare_unused_hypothesis(config: pytest.Config) -> None:
    """Unregister Hypothesis's pytest plugin when no test used Hypothesis.

    We depend on Hypothesis (hermes_envs.testing.strategies), so its plugin loads in every pytest run of a machine
    with hermes-envs installed; its terminal summary imports all of Hypothesis (about 1.3 s of CPU) even when
    nothing used it. With ``hypothesis`` never imported there is nothing for it to report, so dropping it costs no
    output. Runs in pytest_sessionfinish, before the terminal reporter calls pytest_terminal_summary.
    """
    import sys

    if "hypothesis" in sys.modules:
        return
    plugin = config.pluginmanager.get_plugin("hypothesispytest")
    if plugin is not None:
        config.pluginmanager.unregister(plugin)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    from hermes_envs.testing._replay_fixtures import terminal_summary

    if config.stash.get(TARGETS, None) == {}:  # --hermes-conformance given, but its paths hold no env file
        terminalreporter.write_line(
            "hermes-envs: no environment found in "
            + ", ".join(config.getoption("hermes_conformance"))
            + " (no .py file defining a class that derives from an *Env base).",
            yellow=True,
        )

    terminal_summary(terminalreporter, config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put back the environment a ``--hermes-conformance`` session changed (a pytest run inside a process)."""
    _restore(config.stash.get(_SESSION_ENVIRON, {}))
