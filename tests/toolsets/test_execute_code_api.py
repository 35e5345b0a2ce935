"""Scripts written for upstream's ``execute_code`` run unchanged: upstream's ``hermes_tools`` names and signatures,
``terminal`` inside a script, and the helpers (json_parse, shell_quote, retry)."""

from __future__ import annotations

import textwrap

from hermes_envs.tools import get_sandbox
from hermes_envs.tools.toolsets.code_execution import _module_source

from .conftest import call


def run(task_id: str, code: str) -> dict:
    result = call("execute_code", task_id, code=textwrap.dedent(code))
    assert result["status"] == "success", result
    return result


def test_a_script_runs_terminal_commands_in_the_tasks_sandbox(task_id: str) -> None:
    # Before: `from hermes_tools import terminal` was an ImportError (upstream scripts use it the most).
    get_sandbox(task_id).write_text("data/n.txt", "41\n")
    result = run(
        task_id,
        """
        from hermes_tools import terminal, shell_quote
        done = terminal("expr $(cat data/n.txt) + 1 > out.txt && cat out.txt")
        failed = terminal("exit 3")
        named = terminal("ls " + shell_quote("data"), workdir=".")
        print(done["exit_code"], done["output"].strip(), failed["exit_code"], named["output"].strip())
        """,
    )
    assert result["output"].split() == ["0", "42", "3", "n.txt"]
    assert result["tool_calls_made"] == 0  # answered in the script, not over the socket
    assert get_sandbox(task_id).read_text("out.txt") == "42\n"


def test_upstream_file_tool_signatures_work_in_scripts(task_id: str) -> None:
    # Before: patch(path, old_string=..., new_string=...) was a TypeError (ours said old/new), read_file had no
    # offset/limit, search_files no target/file_glob/limit.
    box = get_sandbox(task_id)
    box.write_text("notes.md", "".join(f"line {i}\n" for i in range(1, 11)))
    box.write_text("src/a.py", "x = 1\ny = 1\n")
    box.write_text("src/b.txt", "x = 1\n")
    result = run(
        task_id,
        """
        from hermes_tools import patch, read_file, search_files
        part = read_file("notes.md", offset=3, limit=2)
        print(part["total_lines"], repr(part["content"]))
        patch("notes.md", old_string="line 10", new_string="line ten")
        patch(path="src/a.py", old_string="= 1", new_string="= 2", replace_all=True)
        hits = search_files("= 2", path="src", file_glob="*.py")
        print(hits["total_count"], [m["path"] for m in hits["matches"]])
        files = search_files("*.py", target="files", path="src")
        print(files["files"])
        """,
    )
    lines = result["output"].splitlines()
    assert lines[0] == "10 'line 3\\nline 4\\n'"
    assert lines[1] == "2 ['src/a.py', 'src/a.py']"
    assert lines[2] == "['src/a.py']"
    assert box.read_text("notes.md").endswith("line 9\nline ten\n")
    assert box.read_text("src/a.py") == "x = 2\ny = 2\n"


def test_a_script_gets_a_clear_error_for_v4a_patches(task_id: str) -> None:
    result = call(
        "execute_code",
        task_id,
        code="from hermes_tools import patch\npatch(mode='patch', patch='*** Begin Patch')\n",
    )
    assert result["status"] == "error"
    assert "not available in hermes-envs scripts" in result["output"] and "Fix:" in result["output"]


def test_json_parse_and_retry_helpers(task_id: str) -> None:
    result = run(
        task_id,
        """
        from hermes_tools import json_parse, retry
        print(json_parse('\\ufeff{"a": "tab\\there"}')["a"].split())
        tries = []
        def flaky():
            tries.append(1)
            if len(tries) < 2:
                raise OSError("once")
            return len(tries)
        print(retry(flaky, delay=0))
        """,
    )
    assert result["output"].splitlines() == ["['tab', 'here']", "2"]


def test_tools_the_agent_lacks_are_not_importable() -> None:
    namespace: dict = {}
    exec(compile(_module_source(["read_file"]), "hermes_tools.py", "exec"), namespace)
    assert "read_file" in namespace and "json_parse" in namespace
    assert "terminal" not in namespace and "web_search" not in namespace
