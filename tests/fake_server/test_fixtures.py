"""The pytest fixtures: strict teardown, markers, session scope, respx for other HTTP."""

from __future__ import annotations

import httpx
import openai
import pytest

pytest_plugins = ["pytester"]

USER = [{"role": "user", "content": "q"}]


@pytest.mark.fake_openai(script=[{"content": "from marker"}])
def test_marker_configures_fake_openai(fake_openai):
    r = openai.OpenAI(base_url=fake_openai.base_url, api_key="x").chat.completions.create(
        model="f", messages=USER
    )
    assert r.choices[0].message.content == "from marker"


@pytest.mark.fake_openai(policy="echo")
async def test_marker_policy_async(fake_openai):
    r = await fake_openai.async_client().chat.completions.create(model="f", messages=USER)
    assert r.choices[0].message.content == "q"


@pytest.mark.fake_openai(
    script=[{"content": "", "tool_calls": [{"name": "terminal", "arguments": {"command": "ls"}}]}],
    tool_parser="mistral",
)
def test_marker_takes_every_server_option_such_as_tool_parser(fake_openai):
    # The marker validates against the server's own keyword arguments: tool_parser was refused before.
    r = httpx.post(f"{fake_openai.base_url}/completions", json={"model": "f", "prompt": "q"})
    assert r.json()["choices"][0]["text"].startswith("[TOOL_CALLS]")


def test_session_server_with_per_test_script(fake_openai_session):
    fake_openai_session.reset()
    fake_openai_session.script = [{"content": "session"}]
    assert (
        fake_openai_session.client()
        .chat.completions.create(model="f", messages=USER)
        .choices[0]
        .message.content
        == "session"
    )
    fake_openai_session.script = None


def test_fake_http_mocks_other_hosts_and_passes_loopback(fake_http, fake_openai):
    fake_openai.policy = "answer"
    fake_http.post("https://judge.example/score").respond(json={"score": 1.0})
    assert httpx.post("https://judge.example/score").json() == {"score": 1.0}
    with pytest.raises(Exception, match="not mocked"):
        httpx.get("https://unmocked.example/")
    assert httpx.get(fake_openai.url + "/health").status_code == 200  # loopback passes through


def test_strict_fixture_fails_at_teardown_and_marker_paths_resolve(pytester):
    pytester.makeconftest("from hermes_envs.testing._fixtures import fake_openai  # noqa: F401\n")
    pytester.makefile(".yaml", script="turns:\n  - content: hi\n")
    pytester.makepyfile(
        """
        import openai, pytest

        @pytest.mark.fake_openai("script.yaml")
        def test_two_requests(fake_openai):
            c = openai.OpenAI(base_url=fake_openai.base_url, api_key="x", max_retries=0)
            msgs = [{"role": "user", "content": "q"}]
            assert c.chat.completions.create(model="f", messages=msgs).choices[0].message.content == "hi"
            with pytest.raises(openai.ConflictError):
                c.chat.completions.create(model="f", messages=msgs + [{"role": "assistant", "content": "hi"}] + msgs)

        @pytest.mark.fake_openai(scirpt="x")
        def test_bad_marker(fake_openai):
            pass
        """
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*1 unmatched request*", "*script has 1 turn*"])
    result.stdout.fnmatch_lines(["*should only take*"])
