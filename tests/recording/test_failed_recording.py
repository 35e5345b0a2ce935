"""A recording in which requests fail (wrong key, HTTP 500, server down, key unset) fails loudly and leaves the
previous cassette and reward snapshot exactly as they were."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes_envs.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "environments" / "arithmetic_env.py"
KEY_VAR = "HERMES_TEST_PROVIDER_API_KEY"
GOOD = "version: 1\ninteractions: []\n# the good recording\n"


class _Status500(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"error": {"message": "upstream exploded"}}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server_500() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Status500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _record(url: str, cassette: Path, key_var: str = KEY_VAR) -> int:
    argv = ["record", str(ENV), "--items", "1", "--group-size", "1", "--openai.base_url", url,
            "--openai.model_name", "provider-model", "--openai.api_key-env", key_var, "--cassette", str(cassette),
            "--no-progress"]  # fmt: skip
    return cli_main(argv)


@pytest.fixture
def good_cassette(tmp_path: Path) -> Path:
    cassette = tmp_path / "cassettes" / "rollouts.yaml"
    cassette.parent.mkdir()
    cassette.write_text(GOOD)
    return cassette


def _untouched(cassette: Path) -> None:
    assert cassette.read_text() == GOOD
    assert sorted(p.name for p in cassette.parent.iterdir()) == ["rollouts.yaml"]  # no temp file left


@pytest.mark.slow
def test_a_wrong_key_fails_and_keeps_the_cassette(provider, good_cassette: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-wrong" + "a1" * 16)
    assert _record(provider.url, good_cassette) == 1
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "invalid api key" in err and "previous one is untouched" in err
    _untouched(good_cassette)


def test_an_unset_key_variable_fails_and_keeps_the_cassette(provider, good_cassette: Path, capsys) -> None:
    assert _record(provider.url, good_cassette, key_var="HERMES_TEST_NO_SUCH_VARIABLE") == 1
    assert "HTTP 401" in capsys.readouterr().err
    _untouched(good_cassette)


@pytest.mark.usefixtures("no_client_backoff")
def test_http_500_fails_and_keeps_the_cassette(server_500: str, good_cassette: Path, capsys) -> None:
    assert _record(server_500, good_cassette) == 1
    assert "HTTP 500 " in (err := capsys.readouterr().err) and "upstream exploded" in err
    _untouched(good_cassette)


@pytest.mark.usefixtures("no_client_backoff")
def test_a_server_that_is_down_fails_and_keeps_the_cassette(good_cassette: Path, capsys) -> None:
    assert _record(_closed_port_url(), good_cassette) == 1
    assert "got no answer" in capsys.readouterr().err
    _untouched(good_cassette)


def test_a_first_recording_that_fails_writes_no_cassette(provider, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-wrong" + "b2" * 16)
    cassette = tmp_path / "new" / "rollouts.yaml"
    assert _record(provider.url, cassette) == 1
    assert not cassette.exists()
    assert not cassette.parent.exists() or list(cassette.parent.iterdir()) == []  # no temp file left


TEST_FILE = """
def test_arithmetic_rewards(recorded_rollouts, reward_snapshot):
    run = recorded_rollouts("arithmetic_env.py", items=1, group_size=1)
    assert run.rewards == reward_snapshot
"""


@pytest.mark.slow
def test_pytest_record_with_a_wrong_key_fails_and_keeps_cassette_and_snapshot(
    pytester: pytest.Pytester, provider, monkeypatch
) -> None:
    shutil.copy(ENV, pytester.path / "arithmetic_env.py")
    pytester.makepyfile(test_rewards=TEST_FILE)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    args = ["-p", "no:cacheprovider", "--hermes-record", "--hermes-base-url", provider.url,
            "--hermes-model", "provider-model", "--hermes-api-key-env", KEY_VAR, "--snapshot-update"]  # fmt: skip
    pytester.runpytest(*args).assert_outcomes(passed=1)  # a good recording (the key is right)
    cassette = pytester.path / "cassettes" / "test_rewards" / "test_arithmetic_rewards.yaml"
    snapshot = pytester.path / "__snapshots__" / "test_rewards" / "test_arithmetic_rewards.rewards"
    good_cassette, good_snapshot = cassette.read_bytes(), snapshot.read_text()
    assert good_snapshot.splitlines()[-1] == "item 0: 1"

    monkeypatch.setenv(KEY_VAR, "sk-wrong" + "c3" * 16)
    result = pytester.runpytest(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*should get a successful answer to every request*", "*HTTP 401*"])
    assert cassette.read_bytes() == good_cassette
    assert snapshot.read_text() == good_snapshot
