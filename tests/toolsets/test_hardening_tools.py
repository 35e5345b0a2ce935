"""Red-team breaks of issue 28 in the tool families, each reproduced: host files reached through the files the
harness keeps in a task (process logs and input, skills, execute_code's module), delegation handing on more tools
than the parent had and sub-agents outliving their timeout, execute_code on the container stand-ins and its RPC,
and a deeply nested web page."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from openai.types.chat import ChatCompletion

from hermes_envs.testing.fake_server import FakeOpenAIServer, ToolCall, Turn
from hermes_envs.tools import active_sandboxes, configure_sandboxes, get_sandbox, registry
from hermes_envs.tools.registry import offering
from hermes_envs.tools.toolsets import (
    ModelEndpoint,
    ToolTimeoutError,
    bind_model_endpoint,
    code_execution,
    set_limits,
    use_corpus,
)

from .conftest import call

BACKENDS = ["local", "container"]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    configure_sandboxes(backend=request.param)
    yield request.param
    configure_sandboxes()


@pytest.fixture
def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET-1234\n")
    return secret


def sh(task_id: str, command: str) -> dict:
    return call("terminal", task_id, command=command)


def _wait_exit(task_id: str, sid: str) -> None:
    call("process", task_id, action="wait", session_id=sid, timeout=30)


# ------------------------------------------------------------------ process tool
def test_process_log_never_follows_a_planted_link(task_id: str, backend: str, host_secret: Path) -> None:
    sid = call("process", task_id, action="start", command="echo hello")["session_id"]
    _wait_exit(task_id, sid)
    sh(task_id, f"cd .hermes_proc 2>/dev/null || cd /workspace/.hermes_proc; ln -sf {host_secret} {sid}.log")
    for action in ("log", "poll", "wait"):
        shown = json.dumps(call("process", task_id, action=action, session_id=sid))
        assert "HOST-SECRET" not in shown, (action, shown)


def test_process_input_never_writes_through_a_planted_link(
    task_id: str, backend: str, host_secret: Path
) -> None:
    sid = call("process", task_id, action="start", command="sleep 30")["session_id"]
    sh(
        task_id,
        f"cd .hermes_proc 2>/dev/null || cd /workspace/.hermes_proc; rm -f {sid}.in; ln -s {host_secret} {sid}.in",
    )
    result = call("process", task_id, action="submit", session_id=sid, data="OVERWRITTEN")
    assert "error" in result, result
    assert host_secret.read_text() == "HOST-SECRET-1234\n"
    call("process", task_id, action="kill", session_id=sid)


def test_process_files_follow_the_task_not_the_shells_directory(task_id: str, backend: str) -> None:
    sh(task_id, "mkdir -p elsewhere && cd elsewhere")
    sid = call("process", task_id, action="start", command="echo from-the-log")["session_id"]
    _wait_exit(task_id, sid)
    assert "from-the-log" in call("process", task_id, action="log", session_id=sid)["output"]


# ------------------------------------------------------------------ skills
SKILL = "---\nname: x\ndescription: a skill\n---\nSteps.\n"


def test_skills_never_reach_a_host_file_through_links(task_id: str, backend: str, tmp_path: Path) -> None:
    host_dir = tmp_path / "host-skills"
    (host_dir / "x").mkdir(parents=True)
    (host_dir / "x" / "SKILL.md").write_text("---\nname: x\ndescription: HOST-SECRET\n---\nHOST-SECRET\n")
    sh(task_id, f"ln -s {host_dir} skills")  # the whole skills folder is a link to the host
    listed = call("skills_list", task_id)
    assert "HOST-SECRET" not in json.dumps(listed)
    assert "HOST-SECRET" not in json.dumps(call("skill_view", task_id, name="x"))
    call("skill_manage", task_id, action="create", name="y", content=SKILL)
    call("skill_manage", task_id, action="delete", name="x")
    assert sorted(p.name for p in host_dir.iterdir()) == ["x"]  # nothing written there, nothing deleted
    assert (host_dir / "x" / "SKILL.md").read_text().endswith("HOST-SECRET\n")


def test_a_skill_file_linked_to_a_host_file_is_not_read_or_overwritten(
    task_id: str, backend: str, host_secret: Path
) -> None:
    sh(task_id, f"mkdir -p skills/x && ln -s {host_secret} skills/x/SKILL.md")
    assert "HOST-SECRET" not in json.dumps(call("skill_view", task_id, name="x"))
    call("skill_manage", task_id, action="edit", name="x", content=SKILL)
    assert host_secret.read_text() == "HOST-SECRET-1234\n"


def test_skill_names_with_dots_or_slashes_are_refused(task_id: str, tmp_path: Path, monkeypatch) -> None:
    library = tmp_path / "lib"
    (library / "ok").mkdir(parents=True)
    (library / "ok" / "SKILL.md").write_text(SKILL)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "SKILL.md").write_text("---\nname: o\ndescription: OUTSIDE\n---\nOUTSIDE\n")
    monkeypatch.setenv("HERMES_SKILLS_DIR", str(library))
    for name in ("../outside", "..", "ok/../../outside"):
        viewed = call("skill_view", task_id, name=name)
        assert not viewed["success"] and "OUTSIDE" not in json.dumps(viewed), name
    assert not call("skill_view", task_id, name="ok", file_path="../../outside/SKILL.md")["success"]
    assert call("skill_view", task_id, name="ok")["content"] == SKILL


def test_skill_messages_say_created_and_edited(task_id: str) -> None:
    assert (
        call("skill_manage", task_id, action="create", name="n", content=SKILL)["message"]
        == "Skill 'n' created."
    )
    assert (
        call("skill_manage", task_id, action="edit", name="n", content=SKILL)["message"]
        == "Skill 'n' edited."
    )


# ------------------------------------------------------------------ execute_code
def test_execute_code_never_writes_its_module_through_a_link(
    task_id: str, backend: str, host_secret: Path
) -> None:
    sh(task_id, f"mkdir -p .hermes_exec && ln -s {host_secret} .hermes_exec/hermes_tools.py")
    call("execute_code", task_id, code="print('ran')")
    assert host_secret.read_text() == "HOST-SECRET-1234\n"


@pytest.mark.parametrize("name", ["container", "modal"])
def test_execute_code_runs_on_the_container_style_backends(task_id: str, name: str) -> None:
    configure_sandboxes(backend=name)
    try:
        code = "from hermes_tools import write_file, read_file\nwrite_file('n.txt', 'seven')\nprint(read_file('n.txt')['content'])"
        result = call("execute_code", task_id, code=code)
        assert result["status"] == "success", result
        assert "seven" in result["output"] and result["tool_calls_made"] == 2
    finally:
        configure_sandboxes()


def test_tool_calls_made_never_exceeds_the_limit(task_id: str) -> None:
    code = (
        "from hermes_tools import read_file, write_file\nwrite_file('a.txt', 'x')\nrefused = 0\n"
        "for _ in range(60):\n    try:\n        read_file('a.txt')\n    except RuntimeError:\n        refused += 1\n"
        "print(refused)"
    )
    result = call("execute_code", task_id, code=code)
    assert result["tool_calls_made"] == code_execution.MAX_TOOL_CALLS
    assert result["output"].strip() == str(61 - code_execution.MAX_TOOL_CALLS)


def test_a_silent_rpc_connection_holds_up_nothing_and_kills_no_thread(task_id: str, monkeypatch) -> None:
    set_limits(timeouts={"code_execution": 25}, rpc_request_seconds=0.5)
    failures: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    code = (
        "import os, socket, time\nfrom hermes_tools import write_file\n"
        "silent = socket.socket(socket.AF_UNIX); silent.connect(os.environ['HERMES_RPC_SOCKET'])\n"
        "write_file('b.txt', 'answered')\ntime.sleep(1)\nprint('done')"
    )
    try:
        result = call("execute_code", task_id, code=code)
    finally:
        set_limits(timeouts={"code_execution": 300}, rpc_request_seconds=30)
    assert result["status"] == "success" and result["tool_calls_made"] == 1, result
    assert get_sandbox(task_id).read_text("b.txt") == "answered"
    assert failures == []


# ------------------------------------------------------------------ delegation
def _looping_policy(body: dict) -> Turn:
    time.sleep(0.02)
    tools = [t["function"]["name"] for t in body.get("tools") or []]
    if "todo" in tools:
        return Turn(tool_calls=[ToolCall(name="todo", arguments={"todos": []})])
    return Turn(content="done")


def _sub_agents_ended(task_id: str, within: float = 60.0) -> bool:
    """True once every sub-agent of ``task_id`` has ended: no delegation thread runs (a pool's worker exits once
    its sub-agent returns) and none has a sandbox left; False when one still runs after ``within`` seconds (a
    sub-agent that was never stopped)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        running = [t for t in threading.enumerate() if t.name.startswith("hermes-delegate")]
        if not running and not [t for t in active_sandboxes() if t.startswith(f"{task_id}-delegate-")]:
            return True
        time.sleep(0.05)
    return False


def test_a_sub_agent_gets_no_more_tools_than_its_parent(task_id: str) -> None:
    with FakeOpenAIServer(policy=lambda body: Turn(content="done"), strict=False) as server:
        bind_model_endpoint(ModelEndpoint(base_url=server.base_url))
        parent = {"web_search", "web_extract", "delegate_task"}
        with offering(parent):
            call("delegate_task", task_id, goal="look something up")
            call("delegate_task", task_id, goal="run things", toolsets=["terminal", "web"])
        inherited = {t["function"]["name"] for t in server.calls[0].body.get("tools", [])}
        narrowed = {t["function"]["name"] for t in server.calls[1].body.get("tools", [])}
    assert inherited == {"web_search", "web_extract"}  # not terminal, process, ... nor all of them
    assert narrowed == {"web_search", "web_extract"}  # asking for terminal does not add it


@pytest.mark.slow  # waits out a delegation timeout and watches the model server for a second after it
def test_a_sub_agent_is_stopped_at_the_delegation_timeout(task_id: str) -> None:
    set_limits(timeouts={"delegation": 3})
    try:
        with FakeOpenAIServer(policy=_looping_policy, strict=False) as server:
            bind_model_endpoint(ModelEndpoint(base_url=server.base_url))
            try:
                result = call("delegate_task", task_id, goal="loop forever", max_iterations=100000)
            except ToolTimeoutError:  # (before the fix: the call was abandoned, its sub-agent went on)
                result = None
            assert result is not None and result["results"][0]["status"] == "timeout", result
            assert _sub_agents_ended(task_id)  # a call in flight may finish; then the sub-agent ends
            made = len(server.calls)
            time.sleep(1.0)
            assert len(server.calls) == made  # no model call after the delegation gave up
    finally:
        set_limits(timeouts={"delegation": 900})


# ------------------------------------------------------------------ web corpus
def test_a_deeply_nested_page_does_not_break_web_search(task_id: str, tmp_path: Path, monkeypatch) -> None:
    nested = "<div>" * 1000 + "Deep kettle facts." + "</div>" * 1000
    (tmp_path / "deep.html").write_text(f"<html><head><title>Deep</title></head><body>{nested}</body></html>")
    (tmp_path / "mugs.md").write_text(
        "---\ntitle: Mugs\nurl: https://shop.invalid/mugs\n---\nStoneware mugs.\n"
    )
    monkeypatch.setenv("HERMES_WEB_CORPUS", str(tmp_path))
    try:
        hits = call("web_search", task_id, query="stoneware mugs")["data"]["web"]
        assert hits and hits[0]["url"] == "https://shop.invalid/mugs"
        deep = call("web_search", task_id, query="deep kettle facts")["data"]["web"]
        page = call("web_extract", task_id, urls=[deep[0]["url"]])["results"][0]
        assert "Deep kettle facts." in page["content"]
    finally:
        use_corpus(None)


class _Parent:
    """The parent agent's model: one delegate_task call, then an answer (a ChatCompletion each)."""

    def __init__(self) -> None:
        self.turn = 0

    async def chat_completion(self, **kwargs: object) -> ChatCompletion:
        self.turn += 1
        message: dict = {"role": "assistant", "content": "done"}
        if self.turn == 1:
            args = json.dumps({"goal": "loop forever", "max_iterations": 100000})
            message = {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "delegate_task", "arguments": args}}
            ]}  # fmt: skip
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if self.turn == 1 else "stop"}
        return ChatCompletion.model_validate(
            {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
        )


@pytest.mark.slow  # the loop's tool timeout (1 s), then a second of watching the model server
async def test_a_sub_agent_stops_when_the_agent_loop_gives_its_call_up(task_id: str) -> None:
    from hermes_envs.agent import HermesAgentLoop

    with FakeOpenAIServer(policy=_looping_policy, strict=False) as server:
        bind_model_endpoint(ModelEndpoint(base_url=server.base_url))
        schemas, names = registry.resolve(["delegation", "todo"])
        loop = HermesAgentLoop(_Parent(), schemas, names, task_id=task_id, tool_timeout=1.0)
        result = await loop.run([{"role": "user", "content": "go"}])
        assert result.tool_errors  # the delegate_task call was given up at the loop's timeout
        assert await asyncio.to_thread(_sub_agents_ended, task_id)  # it notices at its next step and ends
        made = len(server.calls)
        await asyncio.sleep(1.0)
        assert len(server.calls) == made  # and then makes no further model call
