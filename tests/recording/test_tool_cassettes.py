"""Real tool-backend calls recorded into the same cassette as the model traffic, then replayed offline.

A stand-in for Firecrawl runs on 127.0.0.1 (the web backend reads its base URL from ``FIRECRAWL_API_URL``); it
refuses requests without ``Authorization: Bearer KEY``, echoes that header in its answer and plants a provider key
in a result. The model is the fake server, whose policy calls ``web_search`` and then answers from what it read.
"""

from __future__ import annotations

import importlib
import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_envs.testing import ToolCassetteMissError
from hermes_envs.testing.cassettes import load_cassette, use_cassette
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.recording import Provider, run_rollouts
from hermes_envs.tools import registry

pytest_plugins = ["pytester"]
# pytester drops modules first imported during a test; the stack the inner run uses is imported at collection (as
# in test_pytest_flow.py: atroposlib's native dependencies cannot be imported twice per process).
for _name in ("atroposlib.envs.base", "hermes_envs.env._base", "environments.agent_loop", "vcr", "openai"):
    importlib.import_module(_name)
importlib.import_module("hermes_envs.testing.offline").load_offline_tokenizer()

TITLE = "Tern Island Lighthouse (1874)"
PLANTED = "sk-or-v1-" + "3f9a1c7e5b2d4086" * 4  # an OpenRouter-shaped key inside a search result

ENV_SOURCE = """
from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs import final_response
from hermes_envs.env import HermesAgentBaseEnv, HermesAgentEnvConfig


class LighthouseEnv(HermesAgentBaseEnv):
    name = "lighthouse"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(
            enabled_toolsets=["web"], max_agent_turns=4, group_size=1,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
        )
        return config, [APIServerConfig(base_url="http://localhost:8000/v1", model_name="hermes", api_key="x",
                                        server_type="openai", health_check=False)]

    async def setup(self):
        pass

    async def get_next_item(self):
        return {"question": "When was the Tern Island Lighthouse first lit?", "answer": "1874"}

    def format_prompt(self, item):
        return "Use web search to answer: " + item["question"]

    async def compute_reward(self, item, result, ctx):
        return 1.0 if item["answer"] in final_response(result) else 0.0

    async def evaluate(self, *args, **kwargs):
        return None
"""


def search_then_answer(body: dict[str, Any]) -> dict[str, Any]:
    """First turn: web_search; then answer with the first result's title (which holds the year)."""
    tool_messages = [m for m in body.get("messages", []) if m.get("role") == "tool"]
    if not tool_messages:
        return {"tool_calls": [{"name": "web_search", "arguments": {"query": "Tern Island Lighthouse"}}]}
    found = json.loads(tool_messages[-1]["content"])
    return {"content": f"According to {found['data']['web'][0]['title']}: first lit in 1874."}


@dataclass
class Backend:
    """The Firecrawl stand-in: its URL, key, and the requests it got (path, Authorization header, JSON body)."""

    url: str
    key: str
    status: int = 200
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    state = Backend(url="", key="fc-" + secrets.token_hex(16))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            auth = self.headers.get("Authorization", "")
            state.requests.append((self.path, auth, body))
            if auth != f"Bearer {state.key}":
                status, payload = 401, {"error": "Unauthorized: invalid token"}
            elif state.status != 200:
                status, payload = state.status, {"error": "internal error"}
            else:
                status, payload = (
                    200,
                    {
                        "success": True,
                        "data": [
                            {
                                "title": TITLE,
                                "url": "https://en.wikipedia.invalid/wiki/Tern_Island_Lighthouse",
                                "description": f"First lit in 1874. debug: auth={auth} token={PLANTED}",
                            }
                        ],
                    },
                )
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HERMES_WEB_BACKEND", "firecrawl")
    monkeypatch.setenv("FIRECRAWL_API_URL", state.url)
    monkeypatch.setenv("FIRECRAWL_API_KEY", state.key)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / "lighthouse_env.py"
    path.write_text(ENV_SOURCE, encoding="utf-8")
    return path


def record(env_file: Path, cassette: Path) -> Any:
    with FakeOpenAIServer(policy=search_then_answer) as model:
        return run_rollouts(
            env_file,
            items=1,
            group_size=1,
            cassette=cassette,
            record_mode="rewrite",
            provider=Provider(base_url=model.base_url, model="fake"),
        )


def test_a_real_web_search_is_recorded_beside_the_model_traffic_redacted(
    backend: Backend, env_file: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "cassettes" / "lighthouse" / "rollouts.yaml"
    run = record(env_file, cassette)
    assert run.rewards == [[1.0]] and not run.cassette.failures, run.cassette.failures
    assert [path for path, _, _ in backend.requests] == ["/v1/search"]  # the real backend was called once
    assert backend.requests[0][1] == f"Bearer {backend.key}"
    assert run.cassette.tool_calls_recorded == 1
    assert any("recorded 2 request(s) and 1 real tool call(s)" in line for line in run.summary_lines())

    text = cassette.read_text(encoding="utf-8")
    assert backend.key not in text and PLANTED not in text  # neither the header's key nor the planted one
    data = yaml.safe_load(text)
    [call] = data["tool_calls"]
    assert call["family"] == "web" and call["operation"] == "search" and call["tool"] == "web_search"
    assert call["request"] == {"backend": "firecrawl", "query": "Tern Island Lighthouse", "limit": 5}
    description = call["response"]["data"]["web"][0]["description"]
    assert description.startswith("First lit in 1874.") and "auth=Bearer REDACTED" in description
    assert "token=REDACTED" in description
    # the backend's own HTTP exchange is the tool call, not one more interaction
    interactions, _ = load_cassette(cassette)
    assert interactions and {i.endpoint for i in interactions} == {"chat/completions"}
    assert backend.url not in text


def test_re_recording_without_drift_keeps_the_file_byte_for_byte(
    backend: Backend, env_file: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "rollouts.yaml"
    record(env_file, cassette)
    before = cassette.read_bytes()
    again = record(env_file, cassette)
    assert again.cassette.unchanged and not again.cassette.drift
    assert cassette.read_bytes() == before


def test_a_changed_backend_answer_is_drift_and_rewrites_the_file(
    backend: Backend, env_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "rollouts.yaml"
    record(env_file, cassette)
    before = cassette.read_bytes()
    monkeypatch.setattr(f"{__name__}.TITLE", "Tern Island Lighthouse, first lit 1874")
    again = record(env_file, cassette)
    assert not again.cassette.unchanged and cassette.read_bytes() != before
    assert any("tool call web.search" in line and "answer changed" in line for line in again.cassette.drift)


def test_replay_answers_the_tool_call_from_the_cassette_with_no_backend_and_no_key(
    backend: Backend, env_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "rollouts.yaml"
    recorded = record(env_file, cassette)
    seen = len(backend.requests)
    monkeypatch.delenv("FIRECRAWL_API_KEY")
    monkeypatch.setenv(
        "FIRECRAWL_API_URL", "https://api.firecrawl.invalid"
    )  # the network guard would refuse it
    replay = run_rollouts(env_file, items=1, group_size=1, cassette=cassette)
    assert replay.rewards == recorded.rewards == [[1.0]]
    assert replay.cassette.misses == [] and replay.cassette.tool_calls_played == 1
    assert replay.tool_errors == 0
    assert len(backend.requests) == seen  # nothing reached the backend


def test_a_tool_call_missing_from_the_cassette_names_tool_arguments_and_the_record_command(
    backend: Backend, env_file: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "rollouts.yaml"
    record(env_file, cassette)
    seen = len(backend.requests)
    with use_cassette(cassette) as session:
        with pytest.raises(ToolCassetteMissError) as caught:
            registry.dispatch("web_search", {"query": "Port Halden ferry"}, "t-miss")
    message = str(caught.value)
    assert "web_search" in message and "Port Halden ferry" in message and "pytest --hermes-record" in message
    assert "HERMES_WEB_BACKEND=firecrawl" in message
    assert session.misses == [message]  # kept, so the fixtures fail the test even when the loop swallows it
    assert len(backend.requests) == seen


@pytest.mark.usefixtures("no_client_backoff")
def test_a_failed_tool_call_fails_the_recording_and_keeps_the_old_cassette(
    backend: Backend, env_file: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "rollouts.yaml"
    record(env_file, cassette)
    before = cassette.read_bytes()
    backend.status = 500
    failed = record(env_file, cassette)
    assert any("tool call web_search (web.search)" in f and "HTTP 500" in f for f in failed.cassette.failures)
    assert "failed" in failed.cassette.failure_message()
    assert cassette.read_bytes() == before


PYTEST_FILE = """
def test_lighthouse(recorded_rollouts):
    run = recorded_rollouts("lighthouse_env.py", items=1, group_size=1)
    assert run.rewards == [[1.0]]
"""


@pytest.mark.slow  # three inner pytest runs through the real agent loop: about 10 s
def test_pytest_hermes_record_keeps_the_web_search_and_replays_it_offline(
    pytester: pytest.Pytester, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pytester.path / "lighthouse_env.py").write_text(ENV_SOURCE, encoding="utf-8")
    pytester.makepyfile(test_lighthouse=PYTEST_FILE)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    with FakeOpenAIServer(policy=search_then_answer) as model:
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            "--hermes-record",
            "--hermes-base-url",
            model.base_url,
            "--hermes-model",
            "fake",
        )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_lighthouse.yaml (rewrite, 2 request(s)) + 1 tool call(s)*"])
    cassette = pytester.path / "cassettes" / "test_lighthouse" / "test_lighthouse.yaml"
    text = cassette.read_text(encoding="utf-8")
    assert "tool_calls:" in text and "tool: web_search" in text and backend.key not in text
    assert len(backend.requests) == 1

    # replay: no model server, no backend key, the backend's URL unreachable
    monkeypatch.delenv("FIRECRAWL_API_KEY")
    monkeypatch.setenv("FIRECRAWL_API_URL", "https://api.firecrawl.invalid")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert len(backend.requests) == 1

    # a tool call the cassette does not hold fails the test, naming the tool call and how to record it
    cassette.write_text(
        text.replace("query: Tern Island Lighthouse", "query: Port Halden ferry"), encoding="utf-8"
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*tool call web_search (web.search) with arguments {"query": "Tern Island Lighthouse"*',
            "*--hermes-record*",
        ]
    )
    assert len(backend.requests) == 1
