"""Replay misses (issue #27 items 3, 11): a string differing past its first 90 characters is shown around the first
difference (before: two identical 88-character excerpts), a request the client sends again is listed once (before:
3 times), and a cassette recorded for another env says so."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from hermes_envs.testing.cassettes import CassetteMissError, use_cassette
from hermes_envs.testing.fake_server import FakeOpenAIServer

PROMPT = "Solve the following problem carefully and show each step of your working before the answer. " * 3


def _ask(url: str, prompt: str) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    return httpx.post(url + "/chat/completions", json=body)


def _record(path: Path, metadata: dict | None = None) -> None:
    with (
        FakeOpenAIServer(policy="answer:text=4") as srv,
        use_cassette(path, "rewrite", metadata=metadata) as s,
    ):
        assert _ask(srv.base_url, PROMPT).status_code == 200
    s.assert_ok()


def test_a_late_edit_is_shown_around_the_first_difference_and_listed_once(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    _record(cassette)
    edited = PROMPT[:200] + "CAREFULLY" + PROMPT[209:]
    with use_cassette(cassette) as session:
        for _ in range(3):  # the client retries the same request
            with pytest.raises(CassetteMissError):
                _ask("http://127.0.0.1:9/v1", edited)
    assert len(session.misses) == 1
    [line] = [x for x in session.misses[0].splitlines() if "messages[0].content" in x]
    assert "CAREFULLY" in line and "carefully" in line.split("recorded", 1)[1]
    assert "differ from character 201" in line


def test_a_cassette_recorded_for_another_env_says_so(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    _record(cassette, {"env": "weather_env.py", "class": "WeatherEnv"})
    with use_cassette(cassette, metadata={"env": "arithmetic_env.py", "class": "ArithmeticEnv"}) as session:
        with pytest.raises(CassetteMissError):
            _ask("http://127.0.0.1:9/v1", "What is 2+2?")
    message = session.misses[0]
    assert "recorded for env 'weather_env.py' class 'WeatherEnv'" in message
    assert "this run is env 'arithmetic_env.py' class 'ArithmeticEnv'" in message


def test_brief_misses_raise_one_line_and_keep_the_explanation_once(tmp_path: Path) -> None:
    """run_rollouts reports the session's misses itself: the exception that the agent loop and the env log
    (twice per miss before) is one line, and the explanation is in the session once."""
    cassette = tmp_path / "c.yaml"
    _record(cassette)
    with use_cassette(cassette, brief_misses=True) as session:
        with pytest.raises(CassetteMissError) as raised:
            _ask("http://127.0.0.1:9/v1", PROMPT + " edited")
    assert "\n" not in str(raised.value) and "miss [1]" in str(raised.value)
    assert "Nearest recorded request" in session.misses[0] and "Fix:" in session.misses[0]
