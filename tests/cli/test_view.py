"""`hermes-envs view`: a groups JSONL -> one self-contained HTML page, checked as text and in a headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hermes_envs.cli import main
from hermes_envs.viewer import find_problems, load_groups, render_html

PAYLOAD = (
    '<script>document.body.dataset.pwned = "1"</script><img src=x onerror="document.body.dataset.pwned=1">'
)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def write_groups(path: Path) -> Path:
    """Two groups as atroposlib writes them: a varied group with tool calls and reasoning, and a degenerate one."""
    convo = [
        {"role": "system", "content": "Be careful."},
        {"role": "user", "content": f"Explain {PAYLOAD}"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "I should run it first.",
            "tool_calls": [_call("call_1", "terminal", json.dumps({"command": "echo '<b>hi</b>'"}))],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": json.dumps({"output": "<b>hi</b>\n", "exit_code": 0}),
        },
        {"role": "assistant", "content": "<think>the output is bold</think>It prints <b>hi</b>."},
    ]
    unanswered = [
        {"role": "user", "content": "Run it."},
        {"role": "assistant", "content": "", "tool_calls": [_call("call_9", "terminal", "{not json")]},
    ]
    groups = [
        {
            "tokens": [[1, 2, 3, 4], [1, 2, 5]],
            "masks": [[-100, -100, 3, 4], [-100, -100, 5]],
            "scores": [1.0, 0.25],
            "messages": [convo, convo],
        },
        {
            "tokens": [[1, 2, 3], [1, 2]],
            "masks": [[-100, -100, -100], [-100, 2, 3]],
            "scores": [0.0, 0.0],
            "messages": [unanswered, unanswered],
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(g) + "\n" for g in groups), encoding="utf-8")
    return path


class _Elements(HTMLParser):
    """Counts start tags and collects ids / hrefs of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.tags


def test_findings_name_each_problem_and_its_rollout(tmp_path: Path) -> None:
    found = {
        (f.anchor, f.message.split(":")[0])
        for f in find_problems(load_groups(write_groups(tmp_path / "g.jsonl")))
    }
    messages = " ".join(f.message for f in find_problems(load_groups(tmp_path / "g.jsonl")))
    assert ("g1", "every rollout scores 0") in found  # serve would drop the group
    assert "every token is masked" in messages and "tokens and masks should have the same length" in messages
    assert "the arguments of the terminal call are not valid JSON" in messages
    assert "has no tool result" in messages
    anchors = {a for a, _ in found}
    assert anchors == {"g1", "g1-r0", "g1-r1"}  # group 0 is clean


def test_page_escapes_every_text_and_loads_nothing(tmp_path: Path) -> None:
    html = render_html(load_groups(write_groups(tmp_path / "g.jsonl")), title="<g>", tokenizer=None)
    tags = elements(html)
    assert [t for t, _ in tags].count("script") == 0 and [t for t, _ in tags].count("img") == 0
    assert "&lt;script&gt;document.body.dataset.pwned" in html and "&lt;b&gt;hi&lt;/b&gt;" in html
    assert not [a for _, a in tags if a.get("src") or (a.get("href") or "#").startswith(("http", "//"))]
    ids = {a["id"] for _, a in tags if a.get("id")}
    links = {a["href"][1:] for t, a in tags if t == "a"}
    assert links <= ids and {"g1-r0", "g1-r1", "g1"} <= links  # every finding links to its rollout


def test_cli_writes_the_page_beside_the_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonl = write_groups(tmp_path / "out" / "g.jsonl")
    assert main(["view", str(jsonl)]) == 0
    page = Path(capsys.readouterr().out.strip())
    assert page == tmp_path / "out" / "g.view.html" and "Rollout 1" in page.read_text()
    assert main(["view", str(tmp_path / "missing.jsonl")]) == 4
    assert "Fix: run the env's `process` command" in capsys.readouterr().err
    (tmp_path / "bad.jsonl").write_text('{"tokens": [[1]]}\n{oops\n')
    assert main(["view", str(tmp_path / "bad.jsonl")]) == 4
    assert "bad.jsonl line 2 should be JSON" in capsys.readouterr().err


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("Chromium is not installed (.ci/run installs the Debian package best effort)")
    return exe


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow  # starts Chromium twice (a few seconds)
def test_the_page_in_a_real_browser(tmp_path: Path) -> None:
    jsonl = write_groups(tmp_path / "g.jsonl")
    assert main(["view", str(jsonl)]) == 0
    page = tmp_path / "g.view.html"
    done = run_chromium("--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    tags = elements(dom)
    body = next(a for t, a in tags if t == "body")
    assert "data-pwned" not in body  # neither the <script> nor the onerror handler ran
    assert sum(1 for t, a in tags if t == "article" and "rollout" in (a.get("class") or "")) == 4
    assert [a.get("data-reward") for t, a in tags if t == "article"] == ["1", "0.25", "0", "0"]
    # the legend, and one trained run in each rollout that has trained tokens (g1-r0 has none)
    assert sum(1 for t, a in tags if t == "span" and a.get("class") == "trained") == 1 + 3
    assert re.search(r'class="reasoning"[^>]*>\s*<summary>reasoning</summary><pre>I should run it first', dom)
    assert "the output is bold" in dom and 'calls <span class="name">terminal</span>' in dom
    assert 'href="#g1-r1"' in dom and 'id="g1-r1"' in dom

    shot = tmp_path / "page.png"
    done = run_chromium("--window-size=1200,1400", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", done.stderr[-2000:]


def test_tool_result_keeps_the_call_ids_case_and_write_file_content_reads_as_lines(tmp_path: Path) -> None:
    """The header's upper-casing (CSS) spares the call id, and a written file's content is shown as its lines,
    not as one line of JSON escapes."""
    content = "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n"
    convo = [
        {"role": "user", "content": "Save it."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("call_AbC9x", "write_file", json.dumps({"path": "task.py", "content": content}))
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_AbC9x",
            "content": json.dumps({"output": "saved", "exit_code": 0}),
        },
    ]
    path = tmp_path / "g.jsonl"
    path.write_text(
        json.dumps({"tokens": [[1]], "masks": [[1]], "scores": [1.0], "messages": [convo]}) + "\n"
    )
    html = render_html(load_groups(path), title="t", tokenizer=None)
    assert '<span class="call-id">call_AbC9x</span>' in html
    assert re.search(r"\.call-id\s*\{[^}]*text-transform:\s*none", html)
    assert "def add(a, b):\n    return a + b\n\nprint(add(2, 3))" in html  # the file's lines, as written
    assert "return a + b\\n" not in html  # not the JSON-escaped single line
    assert "task.py" in html and "(below)" in html


def test_view_names_what_a_non_groups_file_lacks_and_refuses_an_empty_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = tmp_path / "samples.jsonl"  # what evaluate writes under --env.data_dir_to_save_evals
    samples.write_text(json.dumps({"messages": [{"role": "user", "content": "2+2?"}], "score": 1.0}) + "\n")
    assert main(["view", str(samples)]) == 4
    err = capsys.readouterr().err
    assert "no list tokens, masks, scores" in err and "(its keys: messages, score)" in err
    assert "evaluate's samples.jsonl" in err and "--env.data_path_to_save_groups" in err
    empty = tmp_path / "g.jsonl"
    empty.write_text("\n")
    assert main(["view", str(empty)]) == 4
    assert "g.jsonl should hold at least one scored group; it is empty" in capsys.readouterr().err
    assert not (tmp_path / "g.view.html").exists()
