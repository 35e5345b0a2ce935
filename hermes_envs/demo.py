"""The main job on embedded defaults (``hermes-envs demo``): gate the example env, then run it under atroposlib.

1. The conformance kit on the example environment(s), against the built-in fake server.
2. A one-step atroposlib ``process`` run of the example against the same kind of fake server (in this process),
   writing the JSONL of scored groups, atroposlib's HTML and our rollout view (``<env>.view.html``) into the output
   folder.

Quiet by default (one line per step, then a summary table); ``-v`` prints the report and the libraries' output.

No API key, no network, no Hub download: a fake model per example solves its task with the tools (the arithmetic
with the terminal, the script fix with write_file + terminal, the snippet explanation with the terminal, and plays
the judge of the judge example).
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_envs._chat import assistant_turns, offered_tool_names
from hermes_envs._quiet import captured
from hermes_envs.errors import MissingFileError
from hermes_envs.testing._process_run import run_process

EXAMPLES = ("environments.arithmetic_env", "environments.file_task_env", "environments.judge_env")
_EXPRESSION = re.compile(r"What is ([\d\s*+\-/()]+)\?")


def example_paths() -> list[Path]:
    """Files of the example environments (from this checkout or the installed package)."""
    paths = []
    for name in EXAMPLES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise MissingFileError(
                f"example environment {name} should be importable; got no module file for it. "
                "Fix: pip install -e . in the repo."
            )
        paths.append(Path(spec.origin))
    return paths


def arithmetic_policy(body: dict[str, Any]) -> dict[str, Any]:
    """A fake model that solves the arithmetic task: compute with the terminal, then answer from its output."""
    messages = body.get("messages") or []
    tool_outputs = [m.get("content", "") for m in messages if m.get("role") == "tool"]
    if tool_outputs:
        try:
            output = json.loads(tool_outputs[-1]).get("output", "")
        except (ValueError, AttributeError):
            output = tool_outputs[-1]
        numbers = re.findall(r"-?\d+", str(output))
        return {
            "content": f"The terminal says {numbers[-1] if numbers else '?'}.\nAnswer: {numbers[-1] if numbers else 0}"
        }
    prompt = next((m.get("content", "") for m in messages if m.get("role") == "user"), "")
    match = _EXPRESSION.search(prompt if isinstance(prompt, str) else "")
    if not match or not offered_tool_names(body):
        return {"content": "Answer: 0"}
    return {
        "tool_calls": [
            {"name": "terminal", "arguments": {"command": f"python3 -c 'print({match.group(1)})'"}}
        ]
    }


def _example_items(module: str) -> list[dict[str, Any]]:
    """The built-in dataset of an example env (``_make_items()`` of its module)."""
    import importlib

    return importlib.import_module(module)._make_items()


def _first_user(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    content = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    return content if isinstance(content, str) else ""


def file_task_policy() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A fake model that fixes the script of ``environments.file_task_env``: write the fix, run it, summarise."""
    fixes = {item["buggy"]: item["solution"] for item in _example_items("environments.file_task_env")}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompt = _first_user(body)
        solution = next((fix for buggy, fix in fixes.items() if buggy in prompt), None)
        turn = assistant_turns(body.get("messages"))
        if solution is None or not offered_tool_names(body):
            return {"content": "I could not find the script."}
        if turn == 0:
            return {
                "tool_calls": [{"name": "write_file", "arguments": {"path": "task.py", "content": solution}}]
            }
        if turn == 1:
            return {"tool_calls": [{"name": "terminal", "arguments": {"command": "python3 task.py"}}]}
        return {"content": "Fixed the bug; task.py now prints the expected output."}

    return respond


def judge_policy() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A fake model for ``environments.judge_env``: run the snippet, explain it from the reference; as the judge,
    answer a score."""
    references = {item["snippet"]: item["reference"] for item in _example_items("environments.judge_env")}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompt = _first_user(body)
        if prompt.startswith("Snippet:"):  # the env's judge request
            return {"content": "9"}
        snippet = next((s for s in references if f"```python\n{s}\n```" in prompt), None)
        if snippet is None:
            return {"content": "I don't know."}
        if assistant_turns(body.get("messages")) == 0 and offered_tool_names(body):
            command = f"python3 - <<'EOF'\n{snippet}\nEOF"
            return {"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}
        return {"content": references[snippet]}

    return respond


def file_task_mixed_policy() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Like :func:`file_task_policy`, but every other rollout saves the buggy script back unchanged, so the rollouts
    of a group score differently (``serve`` drops a group whose scores are all the same)."""
    items = _example_items("environments.file_task_env")
    solve = file_task_policy()
    lock = threading.Lock()
    started = [0]

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        turn = solve(body)
        prompt = _first_user(body)
        item = next((i for i in items if i["buggy"] in prompt), None)
        if item is None or assistant_turns(body.get("messages")) != 0 or "tool_calls" not in turn:
            return turn
        with lock:
            started[0] += 1
            fixed = started[0] % 2 == 1
        content = item["solution"] if fixed else item["buggy"]
        return {"tool_calls": [{"name": "write_file", "arguments": {"path": "task.py", "content": content}}]}

    return respond


#: example module -> factory of the fake model that solves it (used by the demo and the example tests)
POLICIES: dict[str, Callable[[], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "environments.arithmetic_env": lambda: arithmetic_policy,
    "environments.file_task_env": file_task_policy,
    "environments.judge_env": judge_policy,
}

#: The same fake models by name, for ``hermes-envs fake-server --policy NAME`` (registered by :func:`register`).
NAMED_POLICIES: dict[str, Callable[[], Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "arithmetic": POLICIES["environments.arithmetic_env"],
    "file_task": file_task_policy,
    "file_task_mixed": file_task_mixed_policy,
    "judge": judge_policy,
}


def register_example_policies() -> None:
    """Make the example policies available by name to the fake server (``--policy arithmetic``); idempotent."""
    from hermes_envs.testing.fake_server._policies import POLICIES as REGISTERED
    from hermes_envs.testing.fake_server._policies import register_policy

    for name, factory in NAMED_POLICIES.items():
        if name not in REGISTERED:
            register_policy(name)(factory)


def summarize_jsonl(path: Path) -> dict[str, Any]:
    """Groups, scores, token counts and tool messages of a process-mode JSONL file."""
    groups = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rollouts = [(t, m) for g in groups for t, m in zip(g["tokens"], g["masks"])]
    return {
        "groups": len(groups),
        "scores": [round(s, 4) for g in groups for s in g["scores"]],
        "aligned": all(len(t) == len(m) for t, m in rollouts),
        "trained_tokens": sum(sum(1 for x in m if x != -100) for _, m in rollouts),
        "tokens": sum(len(t) for t, _ in rollouts),
        "tool_messages": sum(
            1 for g in groups for conv in g.get("messages") or [] for msg in conv if msg.get("role") == "tool"
        ),
    }


def _counts(outcomes: list[Any]) -> str:
    """'37 passed, 2 not applicable' for one env's outcomes."""
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome.status.value.replace("_", " ")] = (
            tally.get(outcome.status.value.replace("_", " "), 0) + 1
        )
    return ", ".join(f"{n} {status}" for status, n in sorted(tally.items(), key=lambda kv: -kv[1]))


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def main(out: str | Path = "demo-output", verbose: bool = False) -> int:
    """Run the demo; returns 0 when the examples pass the conformance kit and the process runs wrote JSONL + HTML.

    Quiet by default: one line per step, a summary table at the end, details in ``<out>/demo.log``; ``verbose``
    prints the full conformance report and everything the libraries print.
    """
    from rich.console import Console
    from rich.table import Table

    from hermes_envs.conformance import run_conformance
    from hermes_envs.testing.fake_server import FakeOpenAIServer
    from hermes_envs.viewer import write_view

    console = Console(soft_wrap=True, highlight=False)
    out_dir = Path(out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "demo.log"
    ok = True
    paths = example_paths()
    rows: list[tuple[str, str, str, str]] = []

    with log_path.open("w", encoding="utf-8") as log:
        console.print("[bold]1.[/bold] conformance kit on the example environments ...")
        start = time.perf_counter()
        with captured(log, verbose):
            report = run_conformance([str(p) for p in paths])
        log.write(report.to_text() + "\n")
        report.write(out_dir / "conformance.md")
        if verbose:
            console.print(report.to_text(), markup=False)
        for env in report.envs:
            failed = [o for o in env.outcomes if o.failed]
            rows.append(
                (
                    "conformance",
                    env.label,
                    "[red]FAILED" if failed else "[green]passed",
                    _counts(env.outcomes),
                )
            )
            for outcome in failed:  # the failures in full, also when quiet
                for finding in outcome.findings:
                    console.print(f"  {env.label}: " + finding.render(), markup=False)
        console.print(f"   {len(report.envs)} env(s) in {time.perf_counter() - start:.1f} s")
        ok &= not report.failed

        console.print(
            "[bold]2.[/bold] one-step atroposlib `process` run of each example against a fake model ..."
        )
        for module, path in zip(EXAMPLES, paths):
            with FakeOpenAIServer(policy=POLICIES[module](), strict=True) as server:
                for old in out_dir.glob(f"{path.stem}*.jsonl"):
                    old.unlink()
                start = time.perf_counter()
                done = run_process(path, out_dir, server.base_url)
                log.write(
                    f"--- process run of {path.name} (exit {done.returncode})\n{done.stdout}\n{done.stderr}\n"
                )
                jsonl = out_dir / f"{path.stem}.jsonl"
                if done.returncode != 0 or not jsonl.exists():
                    ok = False
                    detail = done.stderr[-3000:] if verbose else _last_line(done.stderr)
                    rows.append(("process", path.name, f"[red]FAILED (exit {done.returncode})", detail))
                    continue
                summary = summarize_jsonl(jsonl)
                view = write_view(jsonl)
                good = jsonl.with_suffix(".html").exists() and summary["aligned"] and summary["groups"] > 0
                ok &= good
                rows.append(
                    (
                        "process",
                        path.name,
                        "[green]passed" if good else "[red]FAILED",
                        f"scores {summary['scores']}, {summary['tokens']} tokens ({summary['trained_tokens']} "
                        f"trained), {summary['tool_messages']} tool messages, {time.perf_counter() - start:.1f} s; "
                        f"view: {view.name}",
                    )
                )
            if server.failures:
                ok = False
                rows.append(
                    ("fake server", path.name, "[red]FAILED", "; ".join(map(str, server.failures))[:500])
                )

    table = Table(title="hermes-envs demo", title_justify="left")
    for column in ("step", "environment", "result", "details"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(
        ("[bold green]demo passed" if ok else "[bold red]demo failed")
        + f"[/] — everything is in {out_dir}: conformance.md, <env>.jsonl, <env>.view.html (open it in a browser), "
        f"demo.log (details{'' if verbose else '; -v prints them'})"
    )
    return 0 if ok else 1
