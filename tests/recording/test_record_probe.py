"""`hermes-envs record` asks the provider once before any rollout (issue #27 items 7, 8): a dead provider or a
refused key fails in one request with the cause (before: 108 requests, 31 s of retries, "mean reward nan"; or 36 x
HTTP 401 and "recorded 36 request(s)"), and an unset key variable is said up front. The cassette's metadata names
the group size that ran, also when it is the env's own (item 16: it was null)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes_envs.cli import main as cli_main
from hermes_envs.demo import arithmetic_policy
from hermes_envs.testing.cassettes import load_cassette
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.recording import Provider, run_rollouts

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "environments" / "arithmetic_env.py"


class _NeedsKey(BaseHTTPRequestHandler):
    """A local provider that wants a key: every request is refused with 401, and counted."""

    seen: list[str] = []

    def _refuse(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"error": {"message": "missing api key"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def needs_key() -> Iterator[tuple[str, list[str]]]:
    _NeedsKey.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NeedsKey)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", _NeedsKey.seen
    finally:
        server.shutdown()
        server.server_close()


def _record(url: str, cassette: Path, key_var: str) -> int:
    return cli_main(
        ["record", str(ENV), "--items", "2", "--openai.base_url", url, "--openai.model_name", "m"]
        + ["--openai.api_key-env", key_var, "--cassette", str(cassette), "--no-progress"]
    )


def test_an_unset_key_is_said_up_front_and_a_refusal_costs_one_request(
    needs_key, tmp_path: Path, capsys
) -> None:
    url, seen = needs_key
    assert _record(url, tmp_path / "c.yaml", "HERMES_TEST_UNSET_KEY_VARIABLE") == 1
    err = capsys.readouterr().err
    note = err.index("$HERMES_TEST_UNSET_KEY_VARIABLE is unset: sending the placeholder key 'x'")
    assert note < err.index("HTTP 401 ")  # the note comes first
    assert "missing api key" in err and "is unset, so the placeholder key 'x' was sent" in err
    assert "export HERMES_TEST_UNSET_KEY_VARIABLE=" in err and "request(s) failed" not in err
    assert seen == ["GET /v1/models"]  # one probe; no rollout sent anything
    assert not (tmp_path / "c.yaml").exists()


def test_a_dead_provider_fails_at_the_probe(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_TEST_PROBE_KEY", "local-key-123456")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    assert _record(url, tmp_path / "c.yaml", "HERMES_TEST_PROBE_KEY") == 1
    err = capsys.readouterr().err
    assert "got no answer to a first probe (GET " in err and "ConnectError" in err
    assert "mean reward" not in err and "request(s) failed" not in err and "is unset" not in err


def test_the_metadata_names_the_env_default_group_size(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    with FakeOpenAIServer(policy=arithmetic_policy) as srv:
        run = run_rollouts(
            ENV, items=1, cassette=cassette, record_mode="rewrite", provider=Provider(srv.base_url, "fake")
        )
    assert not run.cassette.failures
    hermes = load_cassette(cassette)[1]["hermes"]
    assert hermes["group_size"] == len(run.rewards[0]) == 4  # arithmetic_env's config_init sets 4
