"""The fake server's hosts: the same settings, faults and resets give the same replies and records whichever host
serves (a daemon thread, the caller's thread as the CLI does, a child process), and each host on its own."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hermes_envs.errors import UsageError
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.fake_server._hosts import ChildProcessHost, ThreadHost
from hermes_envs.testing.fake_server._model import FakeModel
from hermes_envs.testing.fake_server._policies import resolve_policy
from hermes_envs.testing.fake_server._serving import LoopRun, bind

USER = [{"role": "user", "content": "q"}]
SECOND_TURN = [*USER, {"role": "assistant", "content": "scripted"}, {"role": "user", "content": "more"}]
HOSTS = ["thread", "foreground", "process"]


def ask(url: str, messages: list[dict[str, str]] = USER) -> tuple[int, str | None]:
    """One chat request: (status, the reply's text when answered)."""
    r = httpx.post(url + "/v1/chat/completions", json={"model": "fake", "messages": messages}, timeout=60)
    return r.status_code, r.json()["choices"][0]["message"]["content"] if r.status_code == 200 else None


def hosted(kind: str, srv: FakeOpenAIServer, work: Callable[[], Any]) -> Any:
    """``work()`` while ``srv`` serves from the ``kind`` of host, then stop it; what ``work`` returned."""
    if kind != "foreground":
        with srv:
            return work()
    done: dict[str, Any] = {}

    def in_a_client_thread() -> None:
        try:
            done["value"] = work()
        except BaseException as e:  # raised again in the test's thread
            done["error"] = e
        finally:
            srv.stop()

    srv.serve_forever(on_ready=lambda: threading.Thread(target=in_a_client_thread, daemon=True).start())
    if "error" in done:
        raise done["error"]
    return done["value"]


def records(srv: FakeOpenAIServer) -> dict[str, Any]:
    return {
        "responders": [c.responder for c in srv.calls],
        "requests": srv.request_count,
        "misses": srv.miss_count,
        "failures": len(srv.failures),
    }


@pytest.mark.parametrize("kind", HOSTS)
def test_the_same_changes_give_the_same_replies_and_records_on_every_host(kind):
    srv = FakeOpenAIServer([{"content": "scripted"}], process=kind == "process")

    def changes() -> list[Any]:
        seen: list[Any] = [
            ask(srv.url),
            ask(srv.url, SECOND_TURN),
            records(srv),
        ]  # past the script's end: a miss
        srv.reset()
        seen.append(records(srv))
        srv.script = None
        srv.policy = "answer:text=from policy"
        seen.append(ask(srv.url))
        srv.set_faults(["500:times=1"])
        seen += [ask(srv.url), ask(srv.url)]
        srv.policy = None
        srv.strict = False
        seen += [ask(srv.url), records(srv)]
        return seen

    assert hosted(kind, srv, changes) == [
        (200, "scripted"),
        (409, None),
        {"responders": ["script", "miss"], "requests": 2, "misses": 1, "failures": 1},
        {"responders": [], "requests": 0, "misses": 0, "failures": 0},
        (200, "from policy"),
        (500, None),
        (200, "from policy"),
        (409, None),
        {"responders": ["policy", "policy", "policy", "miss"], "requests": 4, "misses": 1, "failures": 0},
    ]
    assert not srv.running and srv.pid is None
    # stopped: the records stay readable, and their counts agree with them
    assert records(srv) == {
        "responders": ["policy", "policy", "policy", "miss"],
        "requests": 4,
        "misses": 1,
        "failures": 0,
    }
    # changed while stopped: served from the next start
    srv.policy = "echo"
    srv.strict = True
    srv.set_faults(["503:times=1"])
    assert hosted(kind, srv, lambda: [ask(srv.url), ask(srv.url)]) == [(503, None), (200, "q")]


def test_a_thread_host_is_not_alive_after_stop_and_serves_a_change_made_while_stopped():
    model = FakeModel(policy=resolve_policy("answer:text=first"))
    host = ThreadHost(model)
    port = host.start("127.0.0.1", 0)
    assert host.alive and host.pid is None and host.url == f"http://127.0.0.1:{port}"
    assert ask(host.url) == (200, "first")
    host.stop()
    assert not host.alive
    with pytest.raises(RuntimeError, match="not running"):
        host.url  # noqa: B018
    model.policy = resolve_policy("answer:text=second")
    host.setting("policy", "answer:text=second")
    host.start("127.0.0.1", 0)
    try:
        assert ask(host.url) == (200, "second")
        assert [c.responder for c in host.records()[0]] == ["policy", "policy"]
    finally:
        host.stop()


def test_a_child_process_host_is_not_alive_after_stop_and_serves_a_change_made_while_stopped():
    model = FakeModel()
    host = ChildProcessHost(model, {"policy": "answer:text=first"})
    host.start("127.0.0.1", 0)
    assert host.alive and host.pid is not None
    assert ask(host.url) == (200, "first")
    host.stop()
    assert not host.alive and host.pid is None
    assert [c.responder for c in model.calls] == ["policy"]  # copied back from the child
    host.setting("policy", "answer:text=second")
    host.faults(model.injector.faults, 0)
    host.start("127.0.0.1", 0)
    try:
        assert ask(host.url) == (200, "second")
        assert host.request_count() == 1  # a start begins new records
    finally:
        host.stop()


def test_a_child_process_host_has_no_foreground_and_no_in_process_transport():
    srv = FakeOpenAIServer(policy="echo", process=True)
    with pytest.raises(UsageError, match="without process=True") as e:
        srv.serve_forever()
    assert "Fix:" in str(e.value) and not srv.running
    with pytest.raises(ValueError, match="no in-process\\s+transport"):
        srv.transport()


def test_a_run_stopped_before_it_serves_ends_as_soon_as_it_is_ready():
    run = LoopRun(FakeModel(), bind("127.0.0.1", 0))
    run.stop()
    ready: list[bool] = []
    run.run(lambda: ready.append(True))  # returns at once instead of serving forever
    assert ready == [True] and run.done and run.error is None and run.settled.is_set()


@pytest.mark.parametrize("kind", HOSTS)
def test_the_counts_cover_every_request_beyond_the_history_on_every_host(kind):
    srv = FakeOpenAIServer([{"content": "scripted"}], history=1, process=kind == "process")

    def three_requests_one_miss() -> tuple[int, int, int]:
        ask(srv.url), ask(srv.url, SECOND_TURN), ask(srv.url)
        return srv.request_count, srv.miss_count, len(srv.calls)

    assert hosted(kind, srv, three_requests_one_miss) == (3, 1, 1)
    assert (srv.request_count, srv.miss_count, len(srv.calls)) == (3, 1, 1)  # stopped: the same
    srv.reset()
    assert (srv.request_count, srv.miss_count, len(srv.calls)) == (0, 0, 0)
