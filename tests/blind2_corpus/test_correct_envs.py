"""The correct envs of the blind2 corpus: a right rollout earns full marks and an empty or wrong one earns nothing.

One test per env; the mutant proofs (test_m_*.py) run further probes on the same envs.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from hermes_envs.testing import FakeOpenAIServer

from ._helpers import build, group_scores, load, save_solution_script

NOTHING = [{"content": "I am not sure."}]


async def _scores(stem: str, cls: str, item: Any, script: Any = None, policy: Any = None) -> list[float]:
    module = load(stem)
    with FakeOpenAIServer(script=script, policy=policy) as server:
        return await group_scores(module, cls, server, item)


async def test_units_env() -> None:
    item = load("units_env")._make_items()[0]
    right = [{"content": f"<answer>{item['answer']:.2f} {item['unit']}</answer>"}]
    assert await _scores("units_env", "UnitConversionEnv", item, right) == [1.0, 1.0]
    assert await _scores("units_env", "UnitConversionEnv", item, NOTHING) == [0.0, 0.0]


async def test_ranking_env() -> None:
    item = load("ranking_env")._make_items()[0]
    right = "\n".join(f"{n}. {name}" for n, name in enumerate(item["gold"], 1))
    reverse = "\n".join(f"{n}. {name}" for n, name in enumerate(reversed(item["gold"]), 1))
    assert await _scores("ranking_env", "RankingEnv", item, [{"content": right}]) == [1.0, 1.0]
    assert await _scores("ranking_env", "RankingEnv", item, [{"content": reverse}]) == [0.0, 0.0]


async def test_number_sets_env() -> None:
    item = load("number_sets_env")._make_items()[0]
    right = [{"content": "Answer: " + ", ".join(map(str, item["gold"]))}]
    assert await _scores("number_sets_env", "NumberSetsEnv", item, right) == [1.0, 1.0]
    assert await _scores("number_sets_env", "NumberSetsEnv", item, NOTHING) == [0.0, 0.0]


async def test_code_exec_env() -> None:
    module = load("code_exec_env")
    item = next(i for i in module._make_items() if i["task"] == "rle")
    source = inspect.getsource(module._rle) + "\n\nsolve = _rle\n"
    assert await _scores(
        "code_exec_env", "CodeExecEnv", item, save_solution_script("solution.py", source)
    ) == [
        1.0,
        1.0,
    ]
    assert await _scores("code_exec_env", "CodeExecEnv", item, NOTHING) == [0.0, 0.0]


async def test_repo_tests_env() -> None:
    module = load("repo_tests_env")
    item = next(i for i in module._make_items() if i["bug"] == "sentence_count")
    fixed = [
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "textstats/__init__.py", "content": module.INIT},
                },
                {
                    "name": "write_file",
                    "arguments": {
                        "path": "textstats/core.py",
                        "content": "\n\n".join(module.CORRECT.values()),
                    },
                },
            ]
        },
        {"content": "Fixed sentence_count."},
    ]
    unchanged = [
        {"tool_calls": [{**call, "arguments": {**call["arguments"]}} for call in fixed[0]["tool_calls"]]},
        fixed[1],
    ]
    unchanged[0]["tool_calls"][1]["arguments"]["content"] = item[
        "core"
    ]  # the repository as given, bug and all
    assert await _scores("repo_tests_env", "RepoTestsEnv", item, fixed) == [1.0, 1.0]
    assert await _scores("repo_tests_env", "RepoTestsEnv", item, unchanged) == [0.0, 0.0]
    assert await _scores("repo_tests_env", "RepoTestsEnv", item, NOTHING) == [0.0, 0.0]


async def test_commit_judge_env() -> None:
    item = load("commit_judge_env")._make_items()[0]

    def judged(verdict: str) -> dict:
        return {
            "scripts": {
                "^Write the commit": {"turns": [{"content": item["reference"]}]},
                "^Diff:": {"turns": [{"content": "\n".join(f"{n}: {verdict}" for n in range(1, 5))}]},
            }
        }

    assert await _scores("commit_judge_env", "CommitJudgeEnv", item, judged("yes")) == [1.0, 1.0]
    assert await _scores("commit_judge_env", "CommitJudgeEnv", item, judged("no")) == [0.0, 0.0]


async def test_warehouse_env() -> None:
    item = next(i for i in load("warehouse_env")._make_items() if i["kind"] == "value")

    def clerk(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if not any(m["role"] == "tool" for m in messages):
            calls = [{"name": "stock_level", "arguments": {"sku": s}} for s in item["skus"]]
            calls += [{"name": "unit_price", "arguments": {"sku": s}} for s in item["skus"]]
            return {"tool_calls": calls}
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        stock = {r["sku"]: r["available"] for r in results if "available" in r}
        price = {r["sku"]: r["price"] for r in results if "price" in r}
        return {"content": f"Answer: {sum(stock[s] * price[s] for s in item['skus']):.2f}"}

    assert await _scores("warehouse_env", "WarehouseEnv", item, policy=clerk) == [1.0, 1.0]
    assert await _scores("warehouse_env", "WarehouseEnv", item, NOTHING) == [0.0, 0.0]


async def test_station_kb_env() -> None:
    item = load("station_kb_env")._make_items()[7]

    def reader(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return {"tool_calls": [{"name": "kb_search", "arguments": {"query": item["question"]}}]}
        if turn == 1:
            top = json.loads(messages[-1]["content"])[0]["id"]
            return {"tool_calls": [{"name": "kb_read", "arguments": {"doc_id": top}}]}
        page = json.loads(messages[-1]["content"])
        assert item["answer"] in page["text"]  # the answer really comes from the page the search found
        return {"content": f"Answer: {item['answer']} [{page['id']}]"}

    assert await _scores("station_kb_env", "StationKBEnv", item, policy=reader) == [1.0, 1.0]
    assert await _scores("station_kb_env", "StationKBEnv", item, NOTHING) == [0.0, 0.0]


async def test_support_reply_env() -> None:
    module = load("support_reply_env")
    item = next(i for i in module._make_items() if i["order"])
    good = (
        f"I'm sorry about the {item['keywords'][0]} problem, and thank you for your patience. I have found order "
        f"{item['order']} and passed it to a specialist, who will check what happened and contact you."
    )
    generic = (
        f"I'm sorry about this, and thank you for your patience. I have found order {item['order']} and passed "
        "it to a specialist, who will check what happened and contact you with the options."
    )
    with FakeOpenAIServer(script=[{"content": good}]) as server:
        env = build(module.SupportReplyEnv, server.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(item)
    assert group["scores"] == [1.0, 1.0]
    assert all(
        len(t) == len(m) and any(x != -100 for x in m) for t, m in zip(group["tokens"], group["masks"])
    )
    for bad in (f"We guarantee a full refund for the {item['keywords'][0]} today.", generic):
        with FakeOpenAIServer(script=[{"content": bad}]) as server:
            env = build(module.SupportReplyEnv, server.base_url)
            await env.setup()
            group, _ = await env.collect_trajectories(item)
        assert group["scores"] == [0.0, 0.0]  # a promise on topic, or a polite template off topic
