"""pytest fixtures for recorded episodes (cassettes) and reward/transcript snapshots.

Settings, one precedence order for all (CLI > fixture override > marker):

* record mode — ``--hermes-record-mode MODE`` > ``--hermes-record`` (= ``rewrite``: record every cassette the run
  uses afresh) > pytest-recording's ``--record-mode MODE`` (honoured when given and not ``none``, so one flag
  records both kinds of cassette) > the ``hermes_record_mode`` fixture >
  ``@pytest.mark.hermes_cassette(record_mode=...)`` > ``none`` (replay only; nothing leaves the machine).
* cassette path — ``@pytest.mark.hermes_cassette("path.yaml")`` (relative to the test file) > the default
  ``<test folder>/cassettes/<test module>/<test name>.yaml`` (pytest-recording's layout). A test that also uses
  pytest-recording (``@pytest.mark.vcr`` or its ``vcr`` fixture) would share that default file, one overwriting
  the other: it fails at once, asking for a ``hermes_cassette`` path.
* provider (recording only) — ``--hermes-base-url`` / ``--hermes-model`` / ``--hermes-api-key-env`` > the
  ``hermes_provider`` fixture (override it to start your own server).

Fixtures: ``hermes_cassette`` (a :class:`CassetteSession` around the test: record/replay all its HTTP traffic),
``recorded_rollouts`` (callable: run an env's rollouts through the test's cassette; returns a ``RolloutRun``),
``reward_snapshot`` and ``transcript_snapshot`` (syrupy, see :mod:`hermes_envs.testing.snapshots`).
Only ``pytest`` is imported at module import; everything else inside the fixtures.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "CASSETTES",
    "SnapshotKeptWarning",
    "add_options",
    "hermes_cassette",
    "hermes_cassette_path",
    "hermes_provider",
    "hermes_record_mode",
    "recorded_rollouts",
    "reward_snapshot",
    "terminal_summary",
    "transcript_snapshot",
]

MARKER = "hermes_cassette"
#: Cassette sessions of the run, for the terminal summary (in config.stash).
CASSETTES = pytest.StashKey[list]()


def add_options(group: Any) -> None:
    """The recording options of the ``--hermes-*`` group."""
    group.addoption(
        "--hermes-record",
        action="store_true",
        default=False,
        dest="hermes_record",
        help="record cassettes against the real provider (record mode 'rewrite': each cassette the "
        "run uses is recorded afresh, with a drift summary). Default: replay only, offline.",
    )
    group.addoption(
        "--hermes-record-mode",
        default=None,
        dest="hermes_record_mode",
        choices=["none", "once", "new_episodes", "all", "rewrite"],
        help="vcrpy record mode for cassettes (overrides --hermes-record).",
    )
    group.addoption(
        "--hermes-base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible base URL to record against (with --hermes-record).",
    )
    group.addoption("--hermes-model", default=None, metavar="NAME", help="model name to record with.")
    group.addoption(
        "--hermes-api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the provider key (default: %(default)s).",
    )


def _marker(request: pytest.FixtureRequest) -> tuple[tuple[Any, ...], dict[str, Any]]:
    mark = request.node.get_closest_marker(MARKER)
    return (tuple(mark.args), dict(mark.kwargs)) if mark else ((), {})


def _cli_record_mode(config: pytest.Config) -> str | None:
    mode = config.getoption("hermes_record_mode", default=None)
    if mode:
        return mode
    if config.getoption("hermes_record", default=False):
        return "rewrite"
    vcr_mode = config.getoption("record_mode", default=None)  # pytest-recording's --record-mode, if installed
    if isinstance(vcr_mode, str) and vcr_mode != "none":
        from hermes_envs.testing.cassettes import RECORD_MODES

        if vcr_mode not in RECORD_MODES:
            raise pytest.UsageError(
                f"--record-mode should be one of {', '.join(RECORD_MODES)} for hermes-envs cassettes; got "
                f"{vcr_mode!r}. Fix: use --hermes-record-mode for hermes-envs cassettes."
            )
        return vcr_mode
    return None


@pytest.fixture
def hermes_record_mode(request: pytest.FixtureRequest) -> str:
    """The record mode of this test (override the fixture to change the default; the CLI still wins)."""
    return _marker(request)[1].get("record_mode", "none")


def _safe(name: str) -> str:
    return re.sub(r"[^\w.\-\[\]]+", "_", name)


def _asks_for_vcr(request: pytest.FixtureRequest) -> bool:
    """The test itself takes pytest-recording's ``vcr`` fixture (its autouse fixtures pull it into every test's
    closure, so ``request.fixturenames`` cannot tell)."""
    import inspect

    function = getattr(request.node, "function", None)
    try:
        return function is not None and "vcr" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


@pytest.fixture
def hermes_cassette_path(request: pytest.FixtureRequest) -> Path:
    """``<test folder>/cassettes/<module>/<test name>.yaml``, or the marker's path (relative to the test file)."""
    args, kwargs = _marker(request)
    test_file = Path(str(request.node.path))
    given = kwargs.get("path") or (args[0] if args else None)
    if given:
        p = Path(given)
        return p if p.is_absolute() else test_file.parent / p
    name = request.node.name
    if request.cls is not None:
        name = f"{request.cls.__name__}.{name}"
    path = test_file.parent / "cassettes" / test_file.stem / f"{_safe(name)}.yaml"
    if request.node.get_closest_marker("vcr") is not None or _asks_for_vcr(request):
        pytest.fail(
            f"{request.node.nodeid} should not share a cassette between pytest-recording (@pytest.mark.vcr) and "
            f"hermes-envs; both default to {path}, and one would overwrite the other. Fix: give the hermes-envs "
            f'cassette its own file with @pytest.mark.hermes_cassette("cassettes/{test_file.stem}/{_safe(name)}.hermes.yaml"),'
            " or move pytest-recording's (vcr_cassette_dir / default_cassette_name fixtures).",
            pytrace=False,
        )
    return path


@pytest.fixture
def hermes_provider(request: pytest.FixtureRequest) -> Any:
    """The provider to record against (from ``--hermes-base-url`` etc.), or None (replay: from the cassette)."""
    config = request.config
    base_url = config.getoption("hermes_base_url", default=None)
    if not base_url:
        return None
    from hermes_envs.testing.recording import Provider

    model = config.getoption("hermes_model", default=None) or "default"
    return Provider.from_env(
        base_url, model, config.getoption("hermes_api_key_env", default="OPENAI_API_KEY")
    )


def _mode(request: pytest.FixtureRequest, fixture_value: str) -> str:
    return _cli_record_mode(request.config) or fixture_value or "none"


def _remember(config: pytest.Config, session: Any, nodeid: str) -> None:
    config.stash.setdefault(CASSETTES, []).append((nodeid, session))


def record_command(request: pytest.FixtureRequest) -> str:
    """The exact command that records this test's cassette (provider flags spelled out)."""
    key_env = request.config.getoption("hermes_api_key_env", default="OPENAI_API_KEY")
    return (
        f"{key_env}=... pytest '{request.node.nodeid}' --hermes-record --hermes-base-url URL --hermes-model NAME"
        + ("" if key_env == "OPENAI_API_KEY" else f" --hermes-api-key-env {key_env}")
        + " --snapshot-update"
    )


def _fail_missing(request: pytest.FixtureRequest, path: Path) -> None:
    pytest.fail(
        f"cassette {path} should exist to replay this test; it does not (nothing was sent anywhere). Fix: record it "
        f"once with `{record_command(request)}` (URL and NAME: your OpenAI-compatible provider and model), then "
        "commit it.",
        pytrace=False,
    )


def _fail_on(session: Any) -> None:
    if session.failures:
        pytest.fail(session.failure_message(), pytrace=False)
    if session.misses:
        body = "\n\n".join(f"[{i + 1}] {m}" for i, m in enumerate(session.misses))
        pytest.fail(f"{len(session.misses)} request(s) were not in the cassette:\n\n{body}", pytrace=False)
    if session.findings:
        pytest.fail(
            "secret lint failed on the cassette:\n" + "\n".join(map(str, session.findings)), pytrace=False
        )


@pytest.fixture
def hermes_cassette(
    request: pytest.FixtureRequest, hermes_cassette_path: Path, hermes_record_mode: str, hermes_provider: Any
) -> Iterator[Any]:
    """Record or replay all HTTP traffic of the test in its cassette; fails on misses and on secrets found."""
    from hermes_envs.testing.cassettes import use_cassette

    secrets = [hermes_provider.api_key] if hermes_provider is not None else []
    mode = _mode(request, hermes_record_mode)
    with use_cassette(hermes_cassette_path, mode, secrets=secrets) as session:
        yield session
    _remember(request.config, session, request.node.nodeid)
    if mode == "none" and session.misses and not hermes_cassette_path.exists():
        _fail_missing(request, hermes_cassette_path)
    _fail_on(session)


@pytest.fixture
def recorded_rollouts(
    request: pytest.FixtureRequest, hermes_cassette_path: Path, hermes_record_mode: str, hermes_provider: Any
) -> Callable[..., Any]:
    """``recorded_rollouts(env_file, items=1, group_size=None, cassette=None, ...) -> RolloutRun``.

    Replays the test's cassette through the env's own ``collect_trajectories`` (or records it with
    ``--hermes-record``) and returns the rewards per item (``.rewards``), transcripts, tool errors, turns and tokens.
    A relative ``env_file`` resolves from the rootdir, then from the test's folder. A request the cassette lacks
    fails the test with the nearest recorded request's differing fields.
    """
    from hermes_envs.testing.recording import run_rollouts

    mode = _mode(request, hermes_record_mode)
    test_dir = Path(str(request.node.path)).parent

    def run(
        env_file: str | Path, *, items: int = 1, cassette: str | Path | None = None, **kwargs: Any
    ) -> Any:
        env_path = Path(env_file)
        if not env_path.is_absolute():
            root = Path(str(request.config.rootpath)) / env_path
            env_path = root if root.exists() else test_dir / env_path
        path = Path(cassette) if cassette else hermes_cassette_path
        if not path.is_absolute() and cassette:
            path = test_dir / path
        if mode == "none" and not path.exists():
            _fail_missing(request, path)
        if mode != "none" and hermes_provider is None:
            pytest.fail(
                "recording needs a provider: pass --hermes-base-url URL --hermes-model NAME "
                "(key in $OPENAI_API_KEY or --hermes-api-key-env VAR), or override the hermes_provider "
                "fixture.",
                pytrace=False,
            )
        result = run_rollouts(
            env_path,
            items=items,
            provider=hermes_provider if mode != "none" else None,
            cassette=path,
            record_mode=mode,
            **kwargs,
        )
        if result.cassette is not None:
            _remember(request.config, result.cassette, request.node.nodeid)
            _fail_on(result.cassette)
        return result

    return run


class SnapshotKeptWarning(pytest.PytestWarning):
    """A pinned snapshot was kept under ``--snapshot-update`` because its test never reached the assertion."""


def _keep_unreached(request: pytest.FixtureRequest, assertion: Any) -> None:
    """Under ``--snapshot-update``, a test that asked for a snapshot but stopped before asserting it (a failed
    recording, a crash) would have its pinned values deleted as "unused" by syrupy. Re-assert the stored value, so
    it is kept, and say so."""
    if assertion.num_executions or not request.config.getoption("update_snapshots", default=False):
        return
    extension = assertion.extension
    location = Path(extension.get_location(test_location=assertion.test_location, index=0))
    if not location.is_file():
        return
    stored = location.read_text(encoding="utf-8")
    assertion.assert_match(stored)
    # syrupy counts that re-assertion as "1 snapshot passed"; nothing was checked, so count it with the test's
    # failure instead (the snapshot stays among the used ones, so it is still kept).
    results = getattr(assertion, "executions", None)
    if isinstance(results, dict) and results and dataclasses.is_dataclass(results[max(results)]):
        results[max(results)] = dataclasses.replace(results[max(results)], success=False)
    request.node.warn(
        SnapshotKeptWarning(
            f"snapshot {location} was kept: the test did not reach its snapshot assertion, so "
            "--snapshot-update had nothing to replace it with. Fix the failure above and update again."
        )
    )


def _syrupy_snapshot(request: pytest.FixtureRequest, fixture: str) -> Any:
    """syrupy's ``snapshot`` fixture, or a failure saying how to get it: syrupy is an extra, not a dependency,
    because its pytest plugin would be imported in every pytest run of a project with hermes-envs installed."""
    if not request.config.pluginmanager.has_plugin("syrupy"):
        try:
            import syrupy  # noqa: F401
        except ImportError:
            pytest.fail(
                f"the {fixture} fixture needs syrupy, which hermes-envs installs only with its snapshots extra. "
                "Fix: pip install 'hermes-envs[snapshots]' (or pip install syrupy).",
                pytrace=False,
            )
        pytest.fail(
            f"the {fixture} fixture needs syrupy's pytest plugin, which is installed but disabled in this run "
            "(-p no:syrupy, or PYTEST_DISABLE_PLUGIN_AUTOLOAD). Fix: drop that option, or add -p syrupy.",
            pytrace=False,
        )
    return request.getfixturevalue("snapshot")


@pytest.fixture
def reward_snapshot(request: pytest.FixtureRequest) -> Iterator[Any]:
    """syrupy ``snapshot`` with the reward extension: ``assert run.rewards == reward_snapshot``.

    A test that fails before its assertion keeps its pinned rewards under ``--snapshot-update`` (with a warning)."""
    snapshot = _syrupy_snapshot(request, "reward_snapshot")
    from hermes_envs.testing.snapshots import RewardSnapshotExtension

    assertion = snapshot.use_extension(RewardSnapshotExtension)
    yield assertion
    _keep_unreached(request, assertion)


@pytest.fixture
def transcript_snapshot(request: pytest.FixtureRequest) -> Iterator[Any]:
    """syrupy ``snapshot`` with the transcript extension: ``assert run.transcripts == transcript_snapshot``
    (kept under ``--snapshot-update`` when the test fails before its assertion)."""
    snapshot = _syrupy_snapshot(request, "transcript_snapshot")
    from hermes_envs.testing.snapshots import TranscriptSnapshotExtension

    assertion = snapshot.use_extension(TranscriptSnapshotExtension)
    yield assertion
    _keep_unreached(request, assertion)


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Recorded cassettes and their drift, at the end of the run."""
    sessions = config.stash.get(CASSETTES, [])
    recorded = [(nodeid, s) for nodeid, s in sessions if s.recording]
    if not recorded:
        return
    terminalreporter.section("hermes-envs cassettes")
    for nodeid, s in recorded:
        if s.failures:
            terminalreporter.write_line(
                f"{s.path} ({s.record_mode}) — {nodeid}: RECORDING FAILED, {len(s.failures)} failed request(s); "
                "the cassette was not written"
            )
            continue
        kept = "; no change beyond ports, dates and ids: file kept as it was" if s.unchanged else ""
        tools = f" + {s.tool_calls_recorded} tool call(s)" if s.tool_calls_recorded else ""
        terminalreporter.write_line(
            f"{s.path} ({s.record_mode}, {s.recorded} request(s)){tools}{kept} — {nodeid}"
        )
        if s.old and not s.unchanged:
            for line in s.drift or ["no drift"]:
                terminalreporter.write_line(f"    {line}")
        for f in s.findings:
            terminalreporter.write_line(f"    SECRET {f}")
