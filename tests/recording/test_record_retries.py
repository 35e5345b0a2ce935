"""A recording in which the client retried a failed request successfully (a 429, then a 200) is a good recording:
the failure is not written and does not fail it (before: one 429 failed the whole recording). A request that never
succeeded still fails it."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from hermes_envs.testing.cassettes import CassetteError, load_cassette, use_cassette
from hermes_envs.testing.fake_server import FakeOpenAIServer

ASK = {"model": "m", "messages": [{"role": "user", "content": "2+2?"}]}


def _ask(base_url: str, retries: int) -> str | None:
    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=retries)
    return client.chat.completions.create(**ASK).choices[0].message.content


def test_a_429_the_client_retried_does_not_fail_the_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    with FakeOpenAIServer(policy="answer:text=4", faults=["429:times=1,retry_after=0"]) as srv:
        with use_cassette(cassette, "rewrite") as session:
            assert _ask(srv.base_url, retries=2) == "4"
        assert srv.call_count == 2  # the 429, then the retry
    session.assert_ok()
    assert session.attempted == 2 and session.recorded == 1 and session.retried == 1
    interactions = load_cassette(cassette)[0]
    assert [i.status for i in interactions] == [200]  # the 429 is not replayed
    with use_cassette(cassette) as replay:  # replay: nothing leaves the machine, the one answer is served
        assert _ask("http://127.0.0.1:9/v1", retries=0) == "4"
    assert replay.played == 1


def test_a_request_that_never_succeeds_still_fails_the_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    with FakeOpenAIServer(policy="answer:text=4", faults=["429:retry_after=0"]) as srv:
        with pytest.raises(openai.RateLimitError), use_cassette(cassette, "rewrite") as session:
            _ask(srv.base_url, retries=1)
    assert len(session.failures) == 2 and all("HTTP 429" in f for f in session.failures)
    assert "got no answer" not in session.failure_message()
    assert not cassette.exists()
    with pytest.raises(CassetteError, match="should get a successful answer"):
        session.assert_ok()
