"""The corpus served over HTTP: the corpus-server backend, and `hermes-envs fake-server --web-corpus` driving a
`process` run of the web-research env by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from hermes_envs.testing._process_run import run_process
from hermes_envs.testing.offline import offline_environ
from hermes_envs.tools.toolsets.web_server import CorpusServer

from .conftest import call

ROOT = Path(__file__).resolve().parents[2]


def test_the_corpus_server_backend_answers_like_the_local_fake(
    task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = call("web_search", task_id, query="Tern Island population")
    with CorpusServer() as server:
        monkeypatch.setenv("HERMES_WEB_BACKEND", "corpus-server")
        monkeypatch.setenv("HERMES_WEB_CORPUS_URL", server.url)
        assert call("web_search", task_id, query="Tern Island population") == local
        page = call("web_extract", task_id, urls=["https://en.wikipedia.invalid/wiki/Tern_Island"])[
            "results"
        ][0]
        assert "population was 212" in page["content"]
        html = httpx.get(
            server.url + "/page", params={"url": "https://ferry.porthalden.invalid/timetable"}
        ).text
        assert "<title>Port Halden Ferry - Timetable</title>" in html
        assert "Tern Island Lighthouse" in httpx.get(server.url + "/").text


def test_a_missing_corpus_url_says_what_to_export(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_WEB_BACKEND", "corpus-server")
    monkeypatch.delenv("HERMES_WEB_CORPUS_URL", raising=False)
    with pytest.raises(Exception, match="HERMES_WEB_CORPUS_URL"):
        call("web_search", task_id, query="x")


@pytest.mark.slow  # a fake-server subprocess and a `process` run: about 15 s
def test_fake_server_serves_the_corpus_for_a_process_run_by_hand(tmp_path: Path) -> None:
    script = ROOT / "conformance/good/web_research.yaml"
    env = {**os.environ, **offline_environ(), "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "hermes_envs.cli", "fake-server", "--script", str(script), "--web-corpus", "--lenient"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        base_url = server.stdout.readline().strip()
        lines = []
        while not lines or ("HERMES_WEB_CORPUS_URL=" not in lines[-1] and lines[-1] and len(lines) < 50):
            lines.append(server.stderr.readline())
        corpus_url = lines[-1].split("HERMES_WEB_CORPUS_URL=")[1].strip()
        assert base_url.startswith("http://127.0.0.1:") and corpus_url.endswith("/web"), (base_url, lines)
        os.environ["HERMES_WEB_BACKEND"], os.environ["HERMES_WEB_CORPUS_URL"] = "corpus-server", corpus_url
        try:
            done = run_process(ROOT / "conformance/good/web_research_env.py", tmp_path, base_url, timeout=240)
        finally:
            del os.environ["HERMES_WEB_BACKEND"], os.environ["HERMES_WEB_CORPUS_URL"]
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = [
        json.loads(line) for line in (tmp_path / "web_research_env.jsonl").read_text().splitlines() if line
    ]
    tools = [m["content"] for m in row["messages"][0] if m["role"] == "tool"]
    assert "automated in 1962" in tools[1]
