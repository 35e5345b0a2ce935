"""The pytest flow end to end (pytester): `pytest --hermes-record` against a provider in another process, replay
offline, then a changed reward fails the snapshot with a readable diff."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

# pytester restores sys.modules after each test, dropping modules first imported during it; atroposlib's native
# dependencies cannot be imported twice per process, and re-importing the rest costs seconds per inner run. So the
# stack the inner runs use is imported here, at collection, before any pytester run.
PRELOAD = (
    "atroposlib.envs.base",
    "hermes_envs.env._base",
    "environments.agent_loop",
    "environments.hermes_base_env",
    "environments.tool_context",
    "hermes_envs.env._loader",
    "hermes_envs.testing.cassettes",
    "hermes_envs.testing.recording",
    "hermes_envs.testing._redaction",
    "hermes_envs.testing.snapshots",
    "hypothesis",
    "openai",
    "rich.progress",
    "rich.table",
    "vcr",
)
for _name in PRELOAD:
    importlib.import_module(_name)
importlib.import_module("hermes_envs.testing.offline").load_offline_tokenizer()

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
TEST_FILE = """
def test_arithmetic_rewards(recorded_rollouts, reward_snapshot):
    run = recorded_rollouts("arithmetic_env.py", items=2, group_size=2)
    assert run.rewards == reward_snapshot
"""


def test_record_replay_and_a_reward_change(pytester: pytest.Pytester, providers, monkeypatch) -> None:
    key = providers.fake_key()
    monkeypatch.setenv("HERMES_TEST_PROVIDER_API_KEY", key)
    env = pytester.path / "arithmetic_env.py"
    shutil.copy(ROOT / "environments" / "arithmetic_env.py", env)
    pytester.makepyfile(test_rewards=TEST_FILE)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")

    # 1. replay without a cassette: fails, and says how to record
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*should exist to replay this test*--hermes-record --hermes-base-url URL*"])

    # 2. record against the provider (another process), then stop it
    provider = providers.start(key)
    try:
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "--hermes-record",
            "--hermes-base-url",
            provider.url,
            "--hermes-model",
            "provider-model",
            "--hermes-api-key-env",
            "HERMES_TEST_PROVIDER_API_KEY",
            "--snapshot-update",
        )
    finally:
        provider.stop()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*hermes-envs cassettes*", "*test_arithmetic_rewards.yaml (rewrite, 8 request(s))*"]
    )
    cassette = pytester.path / "cassettes" / "test_rewards" / "test_arithmetic_rewards.yaml"
    snapshot = pytester.path / "__snapshots__" / "test_rewards" / "test_arithmetic_rewards.rewards"
    assert cassette.is_file() and snapshot.read_text().splitlines()[-2:] == ["item 0: 1 1", "item 1: 1 1"]
    assert not [p for p in pytester.path.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]

    # 3. replay offline (the provider is gone)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)

    # 4. the author changes the reward: the snapshot fails with a line diff of the rewards
    env.write_text(env.read_text().replace("            return 1.0\n", "            return 0.25\n"))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*- item 0: 1 1*", "*- item 1: 1 1*", "*+ item 0: 0.25 0.25*", "*+ item 1: 0.25 0.25*"]
    )

    # 5. the tolerance is part of the snapshot: loosen it there and the same change is accepted
    snapshot.write_text(snapshot.read_text().replace("tolerance: 1e-06", "tolerance: 0.8"))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
