"""The stateful and model-backed families: todo, memory, clarify, skills, process, execute_code, and vision, image
generation, mixture of agents and delegation answered by the fake model server."""

from __future__ import annotations

import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.tools import cleanup_sandbox, get_sandbox, registry
from hermes_envs.tools.toolsets import (
    ModelEndpoint,
    ToolBackendError,
    bind_model_endpoint,
    memory_entries,
    todo_list,
)

from .conftest import call


def test_todo_writes_merges_and_reads_per_task(task_id: str) -> None:
    first = call("todo", task_id, todos=[{"id": "1", "content": "search", "status": "in_progress"},
                                         {"id": "2", "content": "answer", "status": "pending"}])  # fmt: skip
    assert first["summary"] == {"total": 2, "pending": 1, "in_progress": 1, "completed": 0, "cancelled": 0}
    merged = call(
        "todo", task_id, todos=[{"id": "1", "content": "search", "status": "completed"}], merge=True
    )
    assert [i["status"] for i in merged["todos"]] == ["completed", "pending"]
    assert call("todo", task_id)["todos"] == merged["todos"] == todo_list(task_id)
    other = task_id + "-x"
    try:
        assert call("todo", other)["todos"] == []  # another task's list is its own
    finally:
        cleanup_sandbox(other)


def test_memory_adds_replaces_removes_within_its_limit(task_id: str) -> None:
    assert call("memory", task_id, action="add", target="memory", content="ferry leaves 08:15")[
        "entries"
    ] == ["ferry leaves 08:15"]
    replaced = call(
        "memory", task_id, action="replace", target="memory", old_text="08:15", content="ferry 16:40"
    )
    assert replaced["entries"] == ["ferry 16:40"] and replaced["usage"] == "11/2200"
    full = call("memory", task_id, action="add", target="user", content="x" * 1400)
    assert not full["success"] and "capacity" in full["error"]
    call("memory", task_id, action="remove", target="memory", old_text="16:40")
    assert memory_entries(task_id) == []


def test_clarify_answers_deterministically_offline(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert call("clarify", task_id, question="Which?", choices=["red", "blue"]) == {
        "question": "Which?", "choices_offered": ["red", "blue"], "user_response": "red"
    }  # fmt: skip
    monkeypatch.setenv("HERMES_CLARIFY_ANSWER", "blue, please")
    assert call("clarify", task_id, question="Which?")["user_response"] == "blue, please"


def test_skills_list_view_and_manage_in_the_sandbox(
    task_id: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = tmp_path / "lib" / "ferry-times"
    library.mkdir(parents=True)
    (library / "SKILL.md").write_text(
        "---\nname: ferry-times\ndescription: Read ferry timetables\n---\nSteps.\n"
    )
    monkeypatch.setenv("HERMES_SKILLS_DIR", str(tmp_path / "lib"))
    assert call("skills_list", task_id)["skills"] == [
        {"name": "ferry-times", "description": "Read ferry timetables", "category": None}
    ]
    assert call("skill_view", task_id, name="ferry-times")["content"].endswith("Steps.\n")
    created = call("skill_manage", task_id, action="create", name="notes",
                   content="---\nname: notes\ndescription: My notes\n---\nBody\n")  # fmt: skip
    assert created["success"] and (get_sandbox(task_id).workdir / "skills/notes/SKILL.md").is_file()
    patched = call(
        "skill_manage", task_id, action="patch", name="ferry-times", old_string="Steps.", new_string="Go."
    )
    assert patched["success"] and "Steps." in (library / "SKILL.md").read_text()  # the library is untouched
    assert call("skill_view", task_id, name="ferry-times")["content"].endswith("Go.\n")


def test_process_starts_waits_and_reads_a_background_command(task_id: str) -> None:
    started = call("process", task_id, action="start", command="read line; echo got $line; exit 3")
    sid = started["session_id"]
    assert call("process", task_id, action="poll", session_id=sid)["status"] == "running"
    assert call("process", task_id, action="submit", session_id=sid, data="hello")["status"] == "written"
    done = call("process", task_id, action="wait", session_id=sid, timeout=20)
    assert done["status"] == "exited" and done["exit_code"] == 3 and "got hello" in done["output"]
    assert [p["session_id"] for p in call("process", task_id, action="list")["processes"]] == [sid]
    slow = call("process", task_id, action="start", command="sleep 100")["session_id"]
    assert call("process", task_id, action="kill", session_id=slow)["status"] == "killed"


def test_execute_code_runs_a_script_in_the_sandbox_that_calls_tools(task_id: str) -> None:
    code = (
        "from hermes_tools import web_search, write_file\n"
        "top = web_search('Tern Island Lighthouse')['data']['web'][0]\n"
        "write_file('top.txt', top['url'])\n"
        "print('found', top['title'])\n"
    )
    result = call("execute_code", task_id, code=code)
    assert result["status"] == "success", result
    assert result["output"].strip() == "found Tern Island Lighthouse" and result["tool_calls_made"] == 2
    assert get_sandbox(task_id).read_text("top.txt").endswith("Tern_Island_Lighthouse")
    failed = call("execute_code", task_id, code="raise SystemExit(4)")
    assert failed["status"] == "error" and "code 4" in failed["error"]


def test_model_backed_tools_need_a_model_server(task_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_TOOLS_MODEL_BASE_URL", raising=False)
    with pytest.raises(ToolBackendError, match="HERMES_TOOLS_MODEL_BASE_URL"):
        registry.dispatch(
            "vision_analyze", {"image_url": "https://x.invalid/a.png", "question": "what?"}, task_id
        )


@pytest.mark.slow  # a fake model server answering several tools: about 4 s
def test_vision_images_moa_and_delegation_are_answered_by_the_env_server(task_id: str) -> None:
    with FakeOpenAIServer(
        policy="answer:text=A red ferry at https://img.invalid/ferry.png", strict=False
    ) as server:
        bind_model_endpoint(ModelEndpoint(base_url=server.base_url))
        get_sandbox(task_id).write_bytes("shot.png", b"\x89PNG fake")
        vision = call("vision_analyze", task_id, image_url="shot.png", question="What boat?")
        assert vision == {"success": True, "analysis": "A red ferry at https://img.invalid/ferry.png"}
        sent = server.calls[-1].body["messages"][0]["content"][1]["image_url"]["url"]
        assert sent.startswith("data:image/png;base64,")
        assert call("image_generate", task_id, prompt="a ferry") == {
            "success": True, "image": "https://img.invalid/ferry.png"
        }  # fmt: skip
        call("browser_navigate", task_id, url="https://ferry.porthalden.invalid/timetable")
        seen = call("browser_vision", task_id, question="What is pictured?")
        assert seen["success"] and seen["analysis"].startswith("A red ferry")
        assert "The crossing takes 55 minutes." in server.calls[-1].body["messages"][0]["content"]
        moa = call("mixture_of_agents", task_id, user_prompt="hard question")
        assert moa["success"] and moa["response"].startswith("A red ferry")
        before = len(server.calls)
        delegated = call("delegate_task", task_id, goal="find the ferry", toolsets=["web"])
        (child,) = delegated["results"]
        assert child["status"] == "completed" and child["summary"].startswith("A red ferry")
        offered = {t["function"]["name"] for t in server.calls[before].body.get("tools", [])}
        assert offered == {"web_search", "web_extract"}
