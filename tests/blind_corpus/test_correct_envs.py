"""The correct envs of conformance/blind/ behave as their docstrings say: a good transcript earns full credit and a
bad one less, on the real agent loop, tools and sandbox, against a scripted fake model."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.retries import fast_retries

from .conftest import answer, build, group_scores, load, prepared


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}


def workspace_command(item: dict) -> str:
    p, pkg = item["project"], item["package"]
    return (
        f"mkdir -p {p}/src/{pkg} {p}/scripts && "
        f"printf '__version__ = \"{item['version']}\"\\n' > {p}/src/{pkg}/__init__.py && "
        f"printf '# {p}\\n\\nA project.\\n' > {p}/README.md && printf '__pycache__/\\n' > {p}/.gitignore && "
        f"printf '#!/bin/sh\\necho \"{item['greeting']}\"\\n' > {p}/scripts/run.sh && chmod +x {p}/scripts/run.sh"
    )


async def test_log_report_grades_the_file() -> None:
    env_file = "log_report_env.py"
    item_of = lambda env: env._items[0]  # noqa: E731
    items = load(env_file)._make_items()
    expected = next(i for i in items if i["id"] == "log-0")["expected"]
    good, _ = await group_scores(
        env_file,
        [write("report.txt", "\n".join(expected) + "\n"), answer("Saved.")[0]],
        lambda e: next(i for i in e._items + e._eval_items if i["id"] == "log-0"),
    )
    claims, _ = await group_scores(env_file, answer("\n".join(expected)), item_of)
    assert good == [1.0, 1.0] and claims == [0.0, 0.0]


async def test_unit_tests_runs_hidden_cases() -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items if i["fn"] == "clamp")

    good, env = await group_scores(
        "unit_tests_env.py", [write("solution.py", "PLACEHOLDER"), answer("ok")[0]], item
    )
    # the placeholder does not import: nothing verified
    assert good == [0.0, 0.0]
    it = item(env)
    good, _ = await group_scores(
        "unit_tests_env.py", [write("solution.py", it["reference"]), answer("ok")[0]], item
    )
    half = "def clamp(x):\n    return x\n"  # right only for the hidden cases already inside the range
    partial, _ = await group_scores("unit_tests_env.py", [write("solution.py", half), answer("ok")[0]], item)
    assert good == [1.0, 1.0]
    assert 0.0 < partial[0] < 0.8


@pytest.mark.parametrize(
    "hack",
    [
        "import sys\n\nprint('RESULT 0 6/6')\nsys.exit(0)\n",  # fakes a report and a clean exit at import
        "class Any:\n    def __eq__(self, other):\n        return True\n\n\ndef clamp(x):\n    return Any()\n",
        # reads a module-level nonce of the runner, if there were one, and fakes a passing report
        "import __main__\nimport os\n\nprint('RESULT', getattr(__main__, 'NONCE', '?'), '6/6')\nos._exit(0)\n",
    ],
)
async def test_unit_tests_resists_reward_hacks(hack: str) -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items if i["fn"] == "clamp")

    scores, _ = await group_scores("unit_tests_env.py", [write("solution.py", hack), answer("ok")[0]], item)
    assert scores == [0.0, 0.0]


async def test_summary_judge_scores_through_the_judge() -> None:
    script = {
        "scripts": {
            "^Summarize": {"turns": [{"content": "The council approved electric buses after complaints."}]},
            "^Passage:": {"turns": [{"content": "8"}]},
        }
    }
    scores, env = await group_scores("summary_judge_env.py", script)
    assert scores == [0.8, 0.8] and env.reward_error_count == 0
    too_long = {"scripts": {"^Summarize": {"turns": [{"content": "word " * 40}]}}}
    scores, _ = await group_scores("summary_judge_env.py", too_long)
    assert scores == [0.0, 0.0]


async def test_multi_answer_accepts_any_one_answer() -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items + env._eval_items if i["question"].startswith("Name one noble gas"))

    ok, _ = await group_scores("multi_answer_env.py", answer("I think so.\nAnswer: The Argon."), item)
    alias, _ = await group_scores("multi_answer_env.py", answer("Answer: Xe"), item)
    hedge, _ = await group_scores("multi_answer_env.py", answer("Answer: neon, argon or xenon"), item)
    assert ok == [1.0, 1.0] and alias == [1.0, 1.0] and hedge == [0.0, 0.0]


async def test_numeric_tolerance_on_negative_answers() -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items if i["answer"] < -1)

    env_file = "numeric_tolerance_env.py"
    with FakeOpenAIServer(script=answer("x")) as server:
        env = build(env_file, server.base_url)
        await env.setup()
        ref = item(env)["answer"]
    close, _ = await group_scores(env_file, answer(f"Answer: {ref * 1.005:.4f}"), item)
    far, _ = await group_scores(env_file, answer(f"Answer: {-ref:.4f}"), item)
    assert close == [1.0, 1.0] and far == [0.0, 0.0]


async def test_workspace_partial_credit_from_sandbox_state() -> None:
    env_file = "workspace_setup_env.py"
    with FakeOpenAIServer(script=answer("x")) as server:
        env = build(env_file, server.base_url)
        await env.setup()
        it = env._items[0]
    full, _ = await group_scores(env_file, [shell(workspace_command(it)), answer("DONE")[0]])
    part, _ = await group_scores(
        env_file, [shell(f"mkdir -p {it['project']}/src/{it['package']}"), answer("DONE")[0]]
    )
    said, _ = await group_scores(env_file, answer("DONE"))
    assert full == [1.0, 1.0] and part == [0.2, 0.2] and said == [0.0, 0.0]


async def test_entity_extraction_f1() -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items if len(i["emails"]) >= 2)

    env_file = "entity_extraction_env.py"
    with FakeOpenAIServer(script=answer("x")) as server:
        env = build(env_file, server.base_url)
        await env.setup()
        emails = item(env)["emails"]
    full, _ = await group_scores(env_file, answer("EMAILS:\n" + "\n".join(e.upper() for e in emails)), item)
    half, _ = await group_scores(env_file, answer("EMAILS:\n" + emails[0]), item)
    assert full == [1.0, 1.0] and 0.0 < half[0] < 1.0


async def test_element_quiz_case_insensitive() -> None:
    def item(env: Any) -> dict:
        return next(i for i in env._items if i["element"] == "Aluminum")

    ok, _ = await group_scores("element_quiz_env.py", answer("<answer> ALUMINIUM </answer>"), item)
    wrong, _ = await group_scores("element_quiz_env.py", answer("<answer>Boron</answer>"), item)
    assert ok == [1.0, 1.0] and wrong == [0.0, 0.0]


async def test_invoice_json_per_field() -> None:
    env_file = "invoice_json_env.py"
    with FakeOpenAIServer(script=answer("x")) as server:
        env = build(env_file, server.base_url)
        await env.setup()
        expected = dict(env._items[0]["expected"])
    full, _ = await group_scores(env_file, answer("Here:\n```json\n" + json.dumps(expected) + "\n```"))
    wrong_total = {**expected, "total": expected["total"] + 5}
    four, _ = await group_scores(env_file, answer(json.dumps(wrong_total)))
    assert full == [1.0, 1.0] and four == [0.8, 0.8]


async def test_review_rating_raw_base_env() -> None:
    env_file = "review_rating_env.py"
    with FakeOpenAIServer(script=answer("x")) as server:
        env = build(env_file, server.base_url)
        await env.setup()
        stars = env._items[0]["stars"]
    good, _ = await group_scores(env_file, answer(f"<rating>{stars}</rating>"))
    off = 1 + (stars % 5)  # a different rating
    other, _ = await group_scores(env_file, answer(f"<rating>{off}</rating>"))
    assert good == [1.0, 1.0] and other[0] < 1.0


def csv_policy(body: dict) -> dict:
    """A model that reads sales.csv and computes the asked value from its rows."""
    messages = body["messages"]
    if messages[-1]["role"] != "tool":
        return shell("cat sales.csv")
    question = next(m["content"] for m in messages if m["role"] == "user")
    output = json.loads(messages[-1]["content"]).get("output", "")
    rows = list(csv.DictReader(io.StringIO(output.strip())))
    region = re.search(r"the (\w+) region", question)
    if "revenue" in question:
        value = sum(int(r["units"]) * float(r["price"]) for r in rows if r["region"] == region.group(1))
    elif "median" in question:
        value = float(statistics.median(int(r["units"]) for r in rows))
    else:
        value = float(sum(1 for r in rows if r["region"] == region.group(1) and int(r["units"]) > 20))
    return {"content": f"Answer: {value}"}


async def test_csv_bench_evaluates_in_the_prepared_sandbox(tmp_path: Path) -> None:
    with FakeOpenAIServer(policy=csv_policy) as server:
        env = build("csv_bench_env.py", server.base_url, data_dir_to_save_evals=str(tmp_path))
        await env.setup()
        env._tasks = env._tasks[:3]
        await env.evaluate()
        server.assert_no_failures()
        assert set(server.temperatures()) == {0.0}
    lines = [json.loads(line) for line in next(tmp_path.rglob("*.jsonl")).read_text().splitlines()]
    assert [s["score"] for s in lines] == [1.0, 1.0, 1.0]
    with pytest.raises(NotImplementedError):
        await env.get_next_item()


TRAINING_ENVS = [
    "log_report_env.py",
    "unit_tests_env.py",
    "summary_judge_env.py",
    "multi_answer_env.py",
    "numeric_tolerance_env.py",
    "workspace_setup_env.py",
    "entity_extraction_env.py",
    "element_quiz_env.py",
    "invoice_json_env.py",
    "review_rating_env.py",
]


@pytest.mark.parametrize("name", TRAINING_ENVS)
async def test_train_and_eval_prompts_are_disjoint_and_stable(name: str) -> None:
    def prompts(env: Any, items: list[dict]) -> list[str]:
        render = getattr(env, "format_prompt", None) or (lambda item: str(env._messages(item)))
        return [render(item) for item in items]

    env, again = await prepared(name), await prepared(name)
    train, evaluation = prompts(env, env._items), prompts(env, env._eval_items)
    assert train and evaluation
    assert not set(train) & set(evaluation)
    assert prompts(again, again._eval_items) == evaluation  # the split does not change between runs


@pytest.mark.parametrize("name", TRAINING_ENVS)
async def test_evaluate_runs_at_temperature_zero_and_logs(name: str, tmp_path: Path) -> None:
    with FakeOpenAIServer(policy="refuse") as server:
        env = build(name, server.base_url, data_dir_to_save_evals=str(tmp_path))
        await env.setup()
        env._eval_items = env._eval_items[:2]
        await env.evaluate()
        server.assert_no_failures()
        assert server.call_count >= 2
        assert set(server.temperatures()) == {0.0}
    assert list(tmp_path.rglob("*.jsonl")) or list(tmp_path.rglob("*.json"))


async def test_review_rating_eval_survives_a_failing_server(tmp_path: Path) -> None:
    with FakeOpenAIServer(policy="refuse", faults=["500"]) as server:
        env = build("review_rating_env.py", server.base_url, data_dir_to_save_evals=str(tmp_path))
        await env.setup()
        env._eval_items = env._eval_items[:2]
        with fast_retries():
            await env.evaluate()  # counted as request errors, not scored, no crash
        assert server.call_count >= 2
    written = " ".join(p.read_text() for p in tmp_path.rglob("*.json*"))
    assert "request_errors" in written


@pytest.mark.parametrize("name", TRAINING_ENVS)
async def test_echoing_the_prompt_earns_nothing(name: str) -> None:
    def pick(env: Any) -> dict:
        return next((i for i in env._items if i.get("emails")), env._items[0])

    with FakeOpenAIServer(policy="echo") as server:
        env = build(name, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(pick(env))
        server.assert_no_failures()
    assert group["scores"] == [0.0, 0.0]
