"""Record real rollouts against a provider in another process (with a fake secret key), stop it, replay offline."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from hermes_envs.testing.cassettes import CassetteMissError, load_cassette, use_cassette
from hermes_envs.testing.offline import NetworkBlockedError
from hermes_envs.testing.recording import Provider, run_rollouts

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "environments" / "arithmetic_env.py"
KEY_VAR = "HERMES_TEST_PROVIDER_API_KEY"


@dataclass
class Recorded:
    key: str
    folder: Path
    cassette: Path
    run: object


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, providers: object) -> Iterator[Recorded]:
    key = providers.fake_key()
    old = os.environ.get(KEY_VAR)
    os.environ[KEY_VAR] = key
    folder = tmp_path_factory.mktemp("rec")
    cassette = folder / "cassettes" / "arithmetic_env" / "rollouts.yaml"
    provider = providers.start(key)
    try:
        run = run_rollouts(
            ENV,
            items=2,
            group_size=2,
            cassette=cassette,
            record_mode="rewrite",
            provider=Provider.from_env(provider.url, "provider-model", KEY_VAR),
        )
    finally:
        provider.stop()  # from here on there is no server: replay must not need one
    try:
        yield Recorded(key, folder, cassette, run)
    finally:
        if old is None:
            os.environ.pop(KEY_VAR, None)
        else:
            os.environ[KEY_VAR] = old


def test_recording_ran_real_rollouts(recorded: Recorded) -> None:
    run = recorded.run
    assert run.rewards == [[1.0, 1.0], [1.0, 1.0]]
    assert run.turns == 8 and run.tokens > 0 and run.failed_requests == 0
    assert run.cassette.recorded == 8 and not run.cassette.findings
    interactions, meta = load_cassette(recorded.cassette)
    assert len(interactions) == 8
    assert meta["hermes"]["model"] == "provider-model" and meta["hermes"]["env"] == "arithmetic_env.py"


def test_replay_offline_gives_the_same_rewards(recorded: Recorded) -> None:
    replay = run_rollouts(ENV, items=2, group_size=2, cassette=recorded.cassette)
    assert replay.rewards == recorded.run.rewards
    assert replay.cassette.misses == [] and replay.cassette.played == 8
    assert [len(t) for t in replay.transcripts] == [2, 2]


def test_the_key_appears_nowhere_on_disk(recorded: Recorded) -> None:
    leaks = []
    for path in recorded.folder.rglob("*"):
        if path.is_file() and recorded.key.encode() in path.read_bytes():
            leaks.append(path)
    assert leaks == []
    text = recorded.cassette.read_text()
    # redacted values are replaced, not dropped
    assert "Bearer REDACTED" in text
    data = yaml.safe_load(text)
    headers = data["interactions"][0]["response"]["headers"]
    assert headers["openai-organization"] == ["REDACTED"]
    assert headers["openai-project"] == ["REDACTED"]
    assert headers["set-cookie"] == ["REDACTED"]
    assert (
        data["interactions"][0]["response"]["body"]["string"]["json"]["system_fingerprint"] == "fp_REDACTED"
    )


def test_a_changed_request_misses_with_the_differing_field(recorded: Recorded, tmp_path: Path) -> None:
    cassette = tmp_path / "edited.yaml"
    text = recorded.cassette.read_text()
    cassette.write_text(text.replace("on the last line.", "at the end."))
    replay = run_rollouts(ENV, items=1, group_size=1, cassette=cassette)
    misses = replay.cassette.misses
    assert misses, "the edited prompt should not match"
    assert "messages[1].content" in misses[0]
    assert "host 127.0.0.1" in misses[0]
    assert "pytest --hermes-record" in misses[0]


def test_replay_blocks_connections_beyond_loopback(recorded: Recorded) -> None:
    with use_cassette(recorded.cassette) as session:
        with pytest.raises(NetworkBlockedError, match=r"10\.255\.255\.1:80.*--hermes-record"):
            socket.create_connection(("10.255.255.1", 80), timeout=1)
        import httpx2

        with pytest.raises(CassetteMissError) as err:
            httpx2.post("https://api.example.com/v1/chat/completions", json={"model": "m", "messages": []})
    assert "host api.example.com" in str(err.value) and "--hermes-record" in str(err.value)
    assert len(session.misses) == 1


def test_rerecording_shows_a_drift_summary(recorded: Recorded, tmp_path: Path, providers: object) -> None:
    cassette = tmp_path / "drift.yaml"
    shutil.copy(recorded.cassette, cassette)
    provider = providers.start(recorded.key, "--answer-offset", "1")
    try:
        run = run_rollouts(
            ENV,
            items=1,
            group_size=2,
            cassette=cassette,
            record_mode="rewrite",
            provider=Provider.from_env(provider.url, "provider-model", KEY_VAR),
        )
    finally:
        provider.stop()
    assert run.rewards == [[0.1, 0.1]]
    drift = "\n".join(run.cassette.drift)
    assert "requests: 8 -> 4" in drift
    assert "Answer: 35736" in drift and "Answer: 35737" in drift, drift
    assert "no longer requested" in drift  # the second item was not re-recorded
    assert "drift since the last recording:" in "\n".join(run.summary_lines())


def test_cli_record_writes_the_cassette_and_prints_the_summary(provider, tmp_path: Path, capsys) -> None:
    from hermes_envs.cli import main as cli_main

    cassette = tmp_path / "cli.yaml"
    argv = ["record", str(ENV), "--items", "1", "--group-size", "1", "--openai.base_url", provider.url,
            "--openai.model_name", "provider-model", "--openai.api_key-env", KEY_VAR, "--cassette", str(cassette),
            "--no-progress"]  # fmt: skip
    assert cli_main(argv) == 0
    err = capsys.readouterr().err
    assert "rewards per item" in err and "mean reward 1.000" in err and "recorded 2 request(s)" in err
    assert provider.key not in cassette.read_text()
