"""pytest-facing cassette behaviour: one message for a missing cassette, the pytest-recording path clash,
--record-mode, and a re-record without drift leaving the file untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hermes_envs.testing.recording import Provider, run_rollouts

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "environments" / "arithmetic_env.py"
KEY_VAR = "HERMES_TEST_PROVIDER_API_KEY"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(ENV, pytester.path / "arithmetic_env.py")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


@pytest.mark.slow
def test_a_missing_cassette_is_one_message_with_the_record_command(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_rewards="""
def test_arithmetic_rewards(recorded_rollouts):
    recorded_rollouts("arithmetic_env.py", items=2, group_size=2)
"""
    )
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    cassette = project.path / "cassettes" / "test_rewards" / "test_arithmetic_rewards.yaml"
    assert f"cassette {cassette} should exist to replay this test" in out
    assert (
        "pytest 'test_rewards.py::test_arithmetic_rewards' --hermes-record --hermes-base-url URL --hermes-model NAME"
        in out
    )
    assert "replay.invalid" not in out and "[2]" not in out and "not in the cassette" not in out


@pytest.mark.slow
def test_pytest_recording_and_hermes_cassettes_do_not_share_a_file(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_clash="""
import pytest

@pytest.mark.vcr
def test_both(hermes_cassette):
    pass

@pytest.mark.vcr
@pytest.mark.hermes_cassette("cassettes/test_clash/test_own.hermes.yaml")
def test_own(hermes_cassette):
    pass
"""
    )
    result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            '*should not share a cassette between pytest-recording*hermes_cassette("cassettes/test_clash/test_both.hermes*'
        ]
    )


@pytest.mark.slow
def test_record_mode_of_pytest_recording_is_honoured(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_mode="""
def test_mode(hermes_cassette):
    assert hermes_cassette.record_mode == "new_episodes"
"""
    )
    project.runpytest("-p", "no:cacheprovider", "--record-mode=new_episodes").assert_outcomes(passed=1)
    project.runpytest(
        "-p", "no:cacheprovider", "--record-mode=new_episodes", "--hermes-record-mode=none"
    ).assert_outcomes(failed=1)


@pytest.mark.slow
def test_rerecording_without_drift_leaves_the_cassette_byte_for_byte(
    tmp_path: Path, providers, monkeypatch
) -> None:
    key = providers.fake_key()
    monkeypatch.setenv(KEY_VAR, key)
    cassette = tmp_path / "rollouts.yaml"
    before = None
    for _ in range(2):  # two provider processes: different ports, dates, ids, `created`
        provider = providers.start(key)
        try:
            run = run_rollouts(
                ENV, items=1, group_size=2, cassette=cassette, record_mode="rewrite",
                provider=Provider.from_env(provider.url, "provider-model", KEY_VAR),
            )  # fmt: skip
        finally:
            provider.stop()
        assert run.rewards == [[1.0, 1.0]] and not run.cassette.failures
        if before is None:
            before = cassette.read_bytes()
    assert run.cassette.unchanged and cassette.read_bytes() == before
    assert "file kept as it was" in "\n".join(run.summary_lines())
