"""The nine correct blind3 envs run offline end to end: a group collected through the real agent loop (or the raw
env's own collect_trajectories) against a scripted fake model, scored as a good answer should be."""

from __future__ import annotations

from typing import Any

import pytest
from blind3_helpers import build, load

from hermes_envs.testing.fake_server import FakeOpenAIServer


def _hidden_tests(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._items if i["id"] == "clamp-0-10")
    code = "def solve(values):\n    return [min(max(x, 0), 10) for x in values]\n"
    script = [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "solution.py", "content": code}}]},
        {"tool_calls": [{"name": "terminal", "arguments": {"command": "python3 -c 'import solution'"}}]},
        {"content": "Implemented solve with min/max."},
    ]
    return item, script, 1.0


def _filetree(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    writes = [
        {"name": "write_file", "arguments": {"path": f["path"], "content": "\n".join(f["contains"]) + "\n"}}
        for f in item["files"]
    ]
    return item, [{"tool_calls": writes}, {"content": "done"}], 1.0


def _ranking(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    sign = -1 if item["descending"] else 1
    order = " > ".join(r["name"] for r in sorted(item["rows"], key=lambda r: sign * r[item["key"]]))
    return item, [{"content": f"Sorted by {item['key']}.\nORDER: {order}"}], 1.0


def _bench(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._eval_items if i["id"] == "q02")
    return item, [{"content": "29 is prime.\nFINAL: 29"}], 1.0


def _commit(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    script = {
        "scripts": {
            "^Write the commit message": {"turns": [{"content": "Fix the check\n\nThe old one was wrong."}]},
            "^Diff:": {"turns": [{"content": "1. yes\n2. yes\n3. yes\n4. yes\nSCORE: 8"}]},
        }
    }
    return item, script, 0.8


def _support(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    ticket = load("support_desk_env").TICKETS[item["ticket_id"]]
    tid, order = ticket["ticket_id"], next(o for o in ticket["orders"] if o["order_id"] == ticket["damaged"])
    script = [
        {"tool_calls": [{"name": "lookup_customer", "arguments": {"ticket_id": tid}}]},
        {
            "tool_calls": [
                {"name": "ask_customer", "arguments": {"ticket_id": tid, "question": "Which item? Email?"}}
            ]
        },
        {
            "tool_calls": [
                {"name": "verify_customer", "arguments": {"ticket_id": tid, "email": ticket["email"]}}
            ]
        },
        {
            "tool_calls": [
                {
                    "name": "issue_refund",
                    "arguments": {"ticket_id": tid, "order_id": order["order_id"], "amount": order["total"]},
                }
            ]
        },
        {"content": f"I refunded order {order['order_id']} in full."},
    ]
    return item, script, 1.0


def _wiki(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._items if i["doc"] == "deploys" and i["a"] == "Kestrel")
    script = [
        {"tool_calls": [{"name": "wiki_search", "arguments": {"query": "production deploys pipeline"}}]},
        {"tool_calls": [{"name": "wiki_open", "arguments": {"page_id": "deploys"}}]},
        {"content": "Answer: Kestrel [doc:deploys]"},
    ]
    return item, script, 1.0


def _reorder(env: Any) -> tuple[dict, Any, float]:
    item = env._items[0]
    low = sorted(r["sku"] for r in item["rows"] if r["stock"] < r["level"])
    return item, [{"content": "SKUS: " + (", ".join(low) or "none")}], 1.0


def _raw(env: Any) -> tuple[dict, Any, float]:
    item = next(i for i in env._items if i["name"] == "gcd")
    code = "```python\ndef gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n```"
    return item, [{"content": code}], 1.0


CASES = {
    "hidden_tests_env": _hidden_tests,
    "filetree_env": _filetree,
    "ranking_env": _ranking,
    "short_answer_bench_env": _bench,
    "commit_message_judge_env": _commit,
    "support_desk_env": _support,
    "wiki_retrieval_env": _wiki,
    "reorder_set_env": _reorder,
    "raw_snippet_exec_env": _raw,
}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_good_group_scores_as_expected(name: str) -> None:
    probe = build(name)
    await probe.setup()
    item, script, expected = CASES[name](probe)
    with FakeOpenAIServer(script=script) as srv:
        env = build(name, srv.base_url)
        await env.setup()
        group, _ = await env.collect_trajectories(item)
        srv.assert_no_failures()
    assert group is not None
    assert group["scores"] == [pytest.approx(expected)] * 2
    # What the trainer's JSON carries: plain lists of ints, one mask entry per token, something trained.
    for tokens, masks in zip(group["tokens"], group["masks"]):
        assert isinstance(tokens, list) and tokens and all(isinstance(t, int) for t in tokens)
        assert isinstance(masks, list) and len(masks) == len(tokens)
        assert any(m != -100 for m in masks)


async def test_hidden_tests_env_ignores_pass_lines_printed_by_the_solution(ctx: Any) -> None:
    """A solution.py that prints passing lines itself (without the checker's nonce) and solves nothing scores 0."""
    from blind3_helpers import answer, transcript

    env = build("hidden_tests_env")
    await env.setup()
    item = next(i for i in env._items if i["id"] == "clamp-0-10")
    forged = "".join(f"print('PASS case {i}'); print('x PASS {i}')\n" for i in range(5))
    ctx.write_file("solution.py", forged + "def solve(values):\n    return None\n")
    assert await env.compute_reward(item, transcript(env.format_prompt(item), answer("done")), ctx) == 0.0


async def test_support_desk_reward_reads_the_rollouts_ledger_without_changing_it(ctx: Any) -> None:
    """The billing ledger lives in the rollout's sandbox: scoring twice gives the same score (reading is pure)."""
    from blind3_helpers import answer, transcript

    env = build("support_desk_env")
    await env.setup()
    item = env._items[0]
    ticket = load("support_desk_env").TICKETS[item["ticket_id"]]
    order = next(o for o in ticket["orders"] if o["order_id"] == ticket["damaged"])
    ctx.call_tool("verify_customer", {"ticket_id": ticket["ticket_id"], "email": ticket["email"]})
    ctx.call_tool(
        "issue_refund",
        {"ticket_id": ticket["ticket_id"], "order_id": order["order_id"], "amount": order["total"]},
    )
    result = transcript(env.format_prompt(item), answer(f"Refunded order {order['order_id']}."))
    assert [await env.compute_reward(item, result, ctx) for _ in range(2)] == [1.0, 1.0]


@pytest.mark.parametrize(
    "name", ["filetree_env", "hidden_tests_env", "support_desk_env", "wiki_retrieval_env"]
)
async def test_conformance_transcripts_good_beats_bad(name: str) -> None:
    """The known-good transcripts an env gives score 1.0 through the agent loop; its known-bad ones score less."""
    probe = build(name)
    await probe.setup()
    items = probe._items[:1] + probe._eval_items[:1]
    for item in items:
        scores = {}
        for kind in ("good", "bad"):
            [turns] = probe.conformance_transcripts(item)[kind]
            with FakeOpenAIServer(script=turns) as srv:
                env = build(name, srv.base_url)
                await env.setup()
                group, _ = await env.collect_trajectories(item)
                srv.assert_no_failures()
            scores[kind] = group["scores"][0]
        assert scores["good"] == 1.0, (item, scores)
        assert scores["bad"] < scores["good"], (item, scores)


def test_hidden_tests_reference_solutions_pass_their_cases() -> None:
    """Every item's reference solution (used by the good transcript) passes its own hidden cases."""
    for item in load("hidden_tests_env")._make_items():
        namespace: dict[str, Any] = {}
        exec(item["solution"], namespace)
        for args, want in item["cases"]:
            assert namespace["solve"](*args) == want, (item["id"], args)
