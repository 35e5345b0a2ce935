from __future__ import annotations

import asyncio
import json
import os

import pytest

from hermes_envs.errors import PathEscapeError
from hermes_envs.tools import ToolContext, active_sandboxes, configure_sandboxes, get_sandbox, registry, tool
from hermes_envs.tools.registry import ToolRegistry


def call(name: str, task: str = "t", **args) -> dict:
    return json.loads(registry.dispatch(name, args, task))


# ------------------------------------------------------------------ built-in tools
def test_terminal_tool_result_shape(backend):
    assert call("terminal", command="echo hi; exit 3") == {"output": "hi\n", "exit_code": 3, "error": None}
    timed = call("terminal", command="sleep 10", timeout=1)
    assert timed["exit_code"] == 124 and "timed out" in timed["error"] and "timed out" in timed["output"]


def test_terminal_default_timeout_comes_from_the_configuration():
    configure_sandboxes(timeout=0.3)
    assert call("terminal", command="sleep 5")["exit_code"] == 124


def test_file_tools(backend):
    assert call("write_file", path="src/a.py", content="x = 1\ny = 2\n") == {
        "path": "src/a.py",
        "bytes_written": 12,
    }
    assert call("read_file", path="src/a.py") == {
        "path": "src/a.py",
        "content": "x = 1\ny = 2\n",
        "truncated": False,
    }
    assert call("terminal", command="cat src/a.py")["output"] == "x = 1\ny = 2\n"
    assert call("patch", path="src/a.py", old="y = 2", new="y = 3") == {"path": "src/a.py", "replacements": 1}
    assert call("read_file", path="src/a.py")["content"] == "x = 1\ny = 3\n"
    with pytest.raises(ValueError, match="not found in 'src/a.py'"):
        call("patch", path="src/a.py", old="z = 9", new="")
    call("write_file", path="dup.txt", content="a\na\n")
    with pytest.raises(ValueError, match="occurs 2 times"):
        call("patch", path="dup.txt", old="a", new="b")
    with pytest.raises(ValueError, match="non-empty"):
        call("patch", path="dup.txt", old="", new="b")
    with pytest.raises(FileNotFoundError, match="no file 'nope.txt'"):
        call("read_file", path="nope.txt")


def test_read_file_truncates_huge_files(backend):
    box = get_sandbox("t")
    box.write_text("big.txt", "x" * 300_000)
    result = call("read_file", path="big.txt")
    assert result["truncated"] and "file truncated" in result["content"]


def test_file_tools_refuse_escapes(backend):
    configure_sandboxes(backend=backend, host_paths=False)  # on local, host paths are otherwise the host's
    get_sandbox("t").run("ln -s /etc etc_link")
    for name, args in [
        ("read_file", {"path": "../x"}),
        ("read_file", {"path": "/etc/hostname"}),
        ("read_file", {"path": "etc_link/hostname"}),
        ("write_file", {"path": "../../escape.txt", "content": "x"}),
        ("patch", {"path": "/etc/hostname", "old": "a", "new": "b"}),
        ("search_files", {"pattern": "root", "path": "/etc"}),
    ]:
        with pytest.raises(PathEscapeError):
            registry.dispatch(name, args, "t")


def test_local_file_tools_reach_absolute_host_paths_as_upstreams_do(scratch):
    """On ``local`` (host_paths on, the default) an absolute path outside the task's folder is the host's own file,
    as upstream's local file tools reach it (roleplay_persona writes the SOUL.md its prompt names); relative paths
    and ``..`` stay in the task's folder, and host_paths=False refuses the same calls."""
    soul = scratch / "workspaces" / "p1" / "SOUL.md"
    configure_sandboxes(backend="local")
    assert call("write_file", path=str(soul), content="I am calm.\n") == {
        "path": str(soul),
        "bytes_written": 11,
    }
    assert soul.read_text() == "I am calm.\n"
    assert call("read_file", path=str(soul)) == {
        "path": str(soul),
        "content": "I am calm.\n",
        "truncated": False,
    }
    assert call("patch", path=str(soul), old="calm", new="bold") == {"path": str(soul), "replacements": 1}
    found = call("search_files", pattern="bold", path=str(scratch))
    assert found == {"matches": [{"path": str(soul), "line": 1, "text": "I am bold."}], "truncated": False}
    with pytest.raises(IsADirectoryError, match="is a folder"):
        call("read_file", path=str(scratch))
    with pytest.raises(FileNotFoundError, match="no file .*nope.md' on this host"):
        call("read_file", path=str(scratch / "nope.md"))
    with pytest.raises(PathEscapeError):
        call("write_file", path="../../escape.txt", content="x")
    assert call("write_file", path=str(get_sandbox("t").workdir / "in.txt"), content="x")["path"] == "in.txt"
    other = (
        get_sandbox("other-rollout").workdir / "secret.txt"
    )  # another rollout's sandbox is never a host path
    with pytest.raises(PathEscapeError):
        call("write_file", path=str(other), content="x")
    assert not other.exists()
    configure_sandboxes(backend="local", host_paths=False)
    for name, args in [
        ("read_file", {"path": str(soul)}),
        ("write_file", {"path": str(scratch / "new.txt"), "content": "x"}),
        ("patch", {"path": str(soul), "old": "bold", "new": "x"}),
        ("search_files", {"pattern": "bold", "path": str(scratch)}),
    ]:
        with pytest.raises(PathEscapeError):
            registry.dispatch(name, args, "t2")
    assert soul.read_text() == "I am bold.\n" and not (scratch / "new.txt").exists()


def test_host_paths_is_a_checked_sandbox_setting():
    from hermes_envs.errors import ConfigError

    with pytest.raises(ConfigError, match="host_paths should be True or False"):
        configure_sandboxes(host_paths="yes")


def test_search_files(backend):
    box = get_sandbox("t")
    box.write_text("a.txt", "alpha\nbeta\nalphabet\n")
    box.write_text("sub/b.py", "def alpha():\n    pass\n")
    box.write_text(".git/config", "alpha")
    (box.workdir / "bin.dat").write_bytes(b"alpha\x00\x01")
    box.run("ln -s /etc/passwd passwd_link; ln -s /etc etc_dir")
    found = call("search_files", pattern="^alpha")
    assert found == {
        "matches": [
            {"path": "a.txt", "line": 1, "text": "alpha"},
            {"path": "a.txt", "line": 3, "text": "alphabet"},
        ],
        "truncated": False,
    }
    assert [m["path"] for m in call("search_files", pattern="alpha", path="sub")["matches"]] == ["sub/b.py"]
    assert call("search_files", pattern="root")["matches"] == []  # symlinks out are not followed
    assert (
        call("search_files", pattern="def alpha(")["matches"][0]["path"] == "sub/b.py"
    )  # invalid regex -> literal
    box.write_text("many.txt", "hit\n" * 500)
    assert call("search_files", pattern="hit")["truncated"] is True


def test_tools_of_different_tasks_use_different_sandboxes():
    call("write_file", task="one", path="f.txt", content="one")
    with pytest.raises(FileNotFoundError):
        call("read_file", task="two", path="f.txt")
    assert sorted(active_sandboxes()) == ["one", "two"]


# ------------------------------------------------------------------ ToolContext
def test_tool_context_sees_the_rollouts_sandbox(backend):
    registry.dispatch("terminal", {"command": "mkdir out && echo 42 > out/answer.txt"}, "rollout-1")
    ctx = ToolContext("rollout-1")
    assert ctx.workdir == get_sandbox("rollout-1").workdir
    assert ctx.read_file("out/answer.txt") == "42\n"
    assert ctx.terminal("cat out/answer.txt") == {"exit_code": 0, "output": "42\n"}
    assert ctx.search("42")["matches"] == [{"path": "out/answer.txt", "line": 1, "text": "42"}]
    ctx.write_file("note.txt", "from reward")
    assert (
        json.loads(registry.dispatch("read_file", {"path": "note.txt"}, "rollout-1"))["content"]
        == "from reward"
    )
    other = ToolContext("rollout-2")
    assert other.terminal("ls -A")["output"] == ""
    ctx.cleanup()
    other.cleanup()
    assert active_sandboxes() == []


def test_upload_and_download_return_upstreams_result_shapes(scratch, backend):
    (scratch / "in" / "deep").mkdir(parents=True)
    (scratch / "in" / "one.txt").write_text("1")
    (scratch / "in" / "deep" / "two.txt").write_text("2")
    ctx = ToolContext("t")
    assert ctx.upload_file(scratch / "in" / "one.txt", "data/one.txt") == {"exit_code": 0, "output": ""}
    assert ctx.upload_dir(scratch / "in", "tree") == [{"exit_code": 0, "output": ""}] * 2
    assert ctx.terminal("cat data/one.txt tree/one.txt tree/deep/two.txt")["output"] == "112"
    ctx.terminal("echo out > result.txt; mkdir -p res/x && echo y > res/x/y.txt; ln -s /etc/passwd res/leak")
    assert ctx.download_file("result.txt", scratch / "got" / "result.txt") == {"success": True, "bytes": 4}
    assert (scratch / "got" / "result.txt").read_text() == "out\n"
    assert ctx.download_dir("res", scratch / "res") == [{"success": True, "bytes": 2}]
    assert (scratch / "res" / "x" / "y.txt").read_text() == "y\n"
    assert os.path.islink(scratch / "res" / "leak")  # copied as a link, not followed
    with pytest.raises(PathEscapeError):
        ctx.download_file("/etc/passwd", scratch / "p")
    with pytest.raises(PathEscapeError):
        ctx.upload_file(scratch / "in" / "one.txt", "../one.txt")
    missing = ctx.upload_file(scratch / "missing", "x")
    assert missing["exit_code"] == -1 and missing["output"].startswith("Local file not found:")
    assert ctx.upload_dir(scratch / "nope", "x")[0]["exit_code"] == -1
    gone = ctx.download_file("nothing.txt", scratch / "n")
    assert gone["success"] is False and "nothing.txt" in gone["error"]
    assert ctx.download_dir("result.txt", scratch / "d") == [
        {"success": False, "error": "Remote directory is empty or missing: result.txt"}
    ]


def test_call_tool():
    reg = ToolRegistry()

    @reg.tool
    def echo(text: str, task_id: str) -> dict:
        return {"text": text, "task": task_id}

    @reg.tool
    def fails() -> str:
        raise ValueError("nope")

    ctx = ToolContext("t", registry=reg)
    assert json.loads(ctx.call_tool("echo", {"text": "hi"})) == {"text": "hi", "task": "t"}
    assert json.loads(ctx.call_tool("fails", {})) == {"error": "Tool execution failed: ValueError: nope"}
    assert json.loads(ctx.call_tool("missing", {}))["error"].startswith(
        "Unknown tool 'missing'. Available tools:"
    )
    default = ToolContext("t")
    assert json.loads(default.call_tool("terminal", {"command": "echo via ctx"}))["output"] == "via ctx\n"


def test_tool_context_validates_the_task_id():
    with pytest.raises(ValueError, match="task_id"):
        ToolContext("")


def test_tool_context_as_context_manager():
    with ToolContext("t") as ctx:
        ctx.write_file("a", "b")
    assert active_sandboxes() == []


async def test_async_twins(scratch, backend):
    (scratch / "f.txt").write_text("up")
    (scratch / "d").mkdir()
    (scratch / "d" / "g.txt").write_text("dir")
    async with ToolContext("t") as ctx:
        assert await ctx.aterminal("echo hi") == {"exit_code": 0, "output": "hi\n"}
        await ctx.awrite_file("w.txt", "written")
        assert await ctx.aread_file("w.txt") == "written"
        await ctx.aupload_file(scratch / "f.txt", "f.txt")
        await ctx.aupload_dir(scratch / "d", "d")
        await ctx.adownload_file("w.txt", scratch / "back.txt")
        await ctx.adownload_dir("d", scratch / "back")
        assert (scratch / "back.txt").read_text() == "written"
        assert (scratch / "back" / "g.txt").read_text() == "dir"
        assert (await ctx.asearch("written"))["matches"][0]["path"] == "w.txt"
        assert json.loads(await ctx.acall_tool("read_file", {"path": "f.txt"}))["content"] == "up"
    assert active_sandboxes() == []
    ctx2 = ToolContext("t2")
    await ctx2.aterminal("true")
    await ctx2.acleanup()
    assert active_sandboxes() == []


async def test_aterminal_does_not_block_a_concurrent_ticker():
    ctx = ToolContext("t")
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    result = await ctx.aterminal("sleep 0.3")
    task.cancel()
    assert result["exit_code"] == 0
    assert ticks >= 10, f"the event loop was blocked: only {ticks} ticks during a 0.3 s command"
    ctx.cleanup()


def test_module_level_tool_decorator_registers_on_the_default_registry():
    @tool(toolset="test-only")
    def only_for_this_test(x: int) -> int:
        """Double x."""
        return 2 * x

    try:
        assert registry.dispatch("only_for_this_test", {"x": 2}, "t") == "4"
        assert registry.resolve(["test-only"])[1] == {"only_for_this_test"}
    finally:
        registry.unregister("only_for_this_test")
