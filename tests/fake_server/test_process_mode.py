"""FakeOpenAIServer(process=True): the same server, records and settings, served from a child Python process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import openai
import pytest

from hermes_envs.testing.fake_server import POLICIES, FakeOpenAIServer, register_policy

USER = [{"role": "user", "content": "q"}]
NOOP = {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}}


def ask(srv: FakeOpenAIServer, messages=USER, **kw):
    client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
    return client.chat.completions.create(model="fake", messages=messages, **kw)


@pytest.fixture
def helper_module(tmp_path, monkeypatch):
    """An importable module (on sys.path) holding a policy function and a policy factory."""
    name = f"proc_policies_{os.getpid()}_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            def shout(body):
                return body["messages"][-1]["content"].upper() + f" from pid {__import__('os').getpid()}"

            def prefixed(prefix="re: "):
                return lambda body: prefix + body["messages"][-1]["content"]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return __import__(name)


def test_a_script_is_served_from_another_process_and_its_records_stay_readable_after_stop():
    with FakeOpenAIServer(
        [{"tool_calls": [{"name": "noop", "arguments": {}}]}, {"content": "done"}], process=True
    ) as srv:
        assert srv.process and srv.pid not in (None, os.getpid())
        first = ask(srv, tools=[NOOP]).choices[0].message
        assert first.tool_calls[0].function.name == "noop"
        history = [*USER, first.model_dump(exclude_none=True)]
        history.append({"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "ok"})
        assert ask(srv, history, tools=[NOOP]).choices[0].message.content == "done"
        assert srv.turns() == [1, 2] and srv.tools_offered() == [["noop"], ["noop"]]
        pid = srv.pid
    assert not srv.running and srv.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert srv.call_count == 2 and srv.conversations() == 1 and srv.failures == []


def test_a_miss_is_a_failure_with_the_nearest_turn_diff():
    with FakeOpenAIServer([{"content": "only turn"}], process=True) as srv:
        ask(srv)
        with pytest.raises(openai.ConflictError):
            ask(
                srv,
                [*USER, {"role": "assistant", "content": "only turn"}, {"role": "user", "content": "more"}],
            )
        assert len(srv.failures) == 1 and "past the script's end" in srv.failures[0]
        with pytest.raises(AssertionError, match="1 unmatched request"):
            srv.assert_no_failures()
    assert "last user message 'more'" in srv.failures[0]


def test_settings_changed_while_serving_reach_the_process():
    with FakeOpenAIServer([{"content": "scripted"}], process=True) as srv:
        assert ask(srv).choices[0].message.content == "scripted"
        srv.reset()
        assert srv.call_count == 0
        srv.script = None
        srv.policy = "answer:text=from policy"
        assert ask(srv).choices[0].message.content == "from policy"
        srv.set_faults(["500:times=1"])
        with pytest.raises(openai.InternalServerError):
            ask(srv)
        assert ask(srv).choices[0].message.content == "from policy"
        srv.policy = None
        srv.strict = False
        with pytest.raises(openai.ConflictError):
            ask(srv)
        assert srv.failures == [] and len(srv.misses) == 1
        assert [c.responder for c in srv.calls] == ["policy", "policy", "policy", "miss"]


def test_settings_made_before_start_are_the_ones_served():
    srv = FakeOpenAIServer(process=True)
    srv.policy = "echo"
    srv.set_faults(["503:times=1"])
    with srv:
        with pytest.raises(openai.InternalServerError):
            ask(srv)
        assert ask(srv).choices[0].message.content == "q"


def test_a_policy_function_from_an_importable_module_runs_in_the_server_process(helper_module):
    with FakeOpenAIServer(policy=helper_module.shout, process=True) as srv:
        text = ask(srv).choices[0].message.content
        pid = srv.pid
    assert text == f"Q from pid {pid}" and pid != os.getpid()


def test_a_policy_registered_in_the_test_process_is_known_to_the_server_process(helper_module):
    with POLICIES.isolated():
        register_policy("proc_prefixed")(helper_module.prefixed)
        with FakeOpenAIServer(policy="proc_prefixed:prefix=>>", process=True) as srv:
            assert ask(srv).choices[0].message.content == ">>q"
    assert "proc_prefixed" not in POLICIES


def test_a_lambda_policy_is_refused_at_construction_with_the_fix():
    with pytest.raises(ValueError) as e:
        FakeOpenAIServer(policy=lambda body: "x", process=True)
    msg = str(e.value)
    assert "should get a policy that can be sent to the server process" in msg
    assert "Fix:" in msg and "process=False" in msg


def test_a_policy_the_server_process_cannot_import_is_reported_at_start(tmp_path):
    import importlib.util

    path = tmp_path / "not_on_sys_path.py"
    path.write_text("def policy(body):\n    return 'x'\n")
    spec = importlib.util.spec_from_file_location("not_on_sys_path", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["not_on_sys_path"] = mod
    try:
        spec.loader.exec_module(mod)
        srv = FakeOpenAIServer(policy=mod.policy, process=True)
        with pytest.raises(RuntimeError) as e:
            srv.start()
    finally:
        del sys.modules["not_on_sys_path"]
    assert "could not load the policy" in str(e.value) and "not_on_sys_path" in str(e.value)
    assert "Fix:" in str(e.value) and not srv.running


def test_no_in_process_transport_in_process_mode():
    srv = FakeOpenAIServer(policy="echo", process=True)
    with pytest.raises(ValueError, match="no in-process\\s+transport"):
        srv.async_client(in_process=True)


def test_a_dead_server_process_is_reported_with_its_exit_code_and_fails_the_stop():
    srv = FakeOpenAIServer(policy="echo", process=True).start()
    os.kill(srv.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"exited unexpectedly \(exit code -9\)"):
        srv.calls  # noqa: B018
    with pytest.raises(RuntimeError, match="recorded calls are lost"):
        srv.stop()
    assert not srv.running
    srv.stop()  # stopping again is a no-op


def test_the_offline_tokenizer_serves_token_routes_from_the_process():
    from hermes_envs.testing.offline import load_offline_tokenizer

    tok = load_offline_tokenizer()
    with FakeOpenAIServer(policy="echo", tokenizer=tok, process=True) as srv:
        import httpx

        r = httpx.post(srv.url + "/tokenize", json={"prompt": "hello world"}).json()
    assert r["tokens"] == tok.encode("hello world", add_special_tokens=False)


def test_the_server_process_exits_when_its_parent_dies():
    code = textwrap.dedent(
        """
        import os
        from hermes_envs.testing.fake_server import FakeOpenAIServer
        srv = FakeOpenAIServer(policy="echo", process=True).start()
        print(srv.pid, flush=True)
        os._exit(0)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    child = int(out.stdout.strip())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the fake server process outlived its parent")


@pytest.mark.fake_openai([{"content": "from a process"}], process=True)
def test_the_fixture_marker_takes_process(fake_openai):
    assert fake_openai.process and fake_openai.pid != os.getpid()
    assert ask(fake_openai).choices[0].message.content == "from a process"


def test_output_to_stdout_in_the_server_process_does_not_break_it(helper_module, tmp_path):
    """A policy that prints (Python or fd-level writes) must not corrupt the parent/child protocol."""
    (tmp_path / "noisy_policy.py").write_text(
        "import os\n\ndef noisy(body):\n    print('chatty policy')\n    os.write(1, b'raw bytes on fd 1\\n')\n"
        "    return 'ok'\n"
    )
    import noisy_policy

    with FakeOpenAIServer(policy=noisy_policy.noisy, process=True) as srv:
        assert ask(srv).choices[0].message.content == "ok"
        assert srv.call_count == 1
