"""Helpers of the blind5 corpus proofs: load an env file of conformance/blind5/ by name, build it offline against a
given model URL, write transcripts by hand, and run a group through the real agent loop on a scripted fake model."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "blind5"
NOWHERE = "http://127.0.0.1:9/v1"


def load(name: str) -> ModuleType:
    """Import ``conformance/blind5/<name>.py`` once per session under a private module name."""
    mod_name = f"blind5_corpus_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


def env_class(module: ModuleType) -> type:
    """The one env class a corpus file defines."""
    from atroposlib.envs.base import BaseEnv

    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, BaseEnv) and v.__module__ == module.__name__
    ]
    assert len(found) == 1, found
    return found[0]


def build(name: str, base_url: str = NOWHERE, **overrides: Any) -> Any:
    """The env of corpus file ``name`` from its own config_init, with the offline tokenizer and a given model URL."""
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    from hermes_envs.testing.offline import offline_tokenizer_path

    cls = env_class(load(name))
    config, _ = cls.config_init()
    config = config.model_copy(
        update={"tokenizer_name": offline_tokenizer_path(), "use_wandb": False, "group_size": 2, **overrides}
    )
    servers = [
        APIServerConfig(
            base_url=base_url, model_name="fake", api_key="x", server_type="openai", health_check=False
        )
    ]
    return cls(config, servers, slurm=False, testing=False)


async def ready(name: str, base_url: str = NOWHERE, **overrides: Any) -> Any:
    """``build`` then ``setup``."""
    env = build(name, base_url, **overrides)
    await env.setup()
    return env


def transcript(prompt: str, *turns: dict[str, Any]) -> Any:
    """An AgentResult: the user prompt, then the given assistant/tool messages, ended naturally."""
    from hermes_envs import AgentResult

    messages = [{"role": "user", "content": prompt}, *turns]
    assistants = sum(1 for m in messages if m["role"] == "assistant")
    return AgentResult(messages=messages, turns_used=assistants, finished_naturally=True)


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(name: str, arguments: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    """An assistant message making one tool call."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


async def group_scores(name: str, item: Any, script: Any, **overrides: Any) -> list[float]:
    """Scores of one group of ``item`` collected through the env's own collect_trajectories on a scripted model
    (``script``: a script, or a policy when it is callable)."""
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    server = FakeOpenAIServer(policy=script) if callable(script) else FakeOpenAIServer(script=script)
    with server as srv:
        env = await ready(name, srv.base_url, **overrides)
        group, _ = await env.collect_trajectories(item)
        srv.assert_no_failures()
    assert group is not None
    return list(group["scores"])


async def dispatch(name: str, arguments: dict[str, Any], task_id: str) -> str:
    """Call a registered tool as the agent loop does."""
    from hermes_envs.tools import registry

    return await registry.adispatch(name, arguments, task_id)


def user_prompts(srv: Any) -> list[str]:
    """The last user message of every chat request the fake server answered."""
    out = []
    for c in srv.calls:
        messages = (c.body or {}).get("messages") or []
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        if users:
            out.append(users[-1])
    return out


def write_file_turn(path: str, content: str) -> dict:
    """A scripted fake-model turn saving ``content`` at ``path`` with the built-in write_file tool."""
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


async def ticks_during(coro: Any) -> int:
    """How many times a concurrent coroutine got the event loop while ``coro`` ran (0: ``coro`` held it all along)."""
    import asyncio

    ticks = 0
    running = True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    start = ticks
    try:
        await coro
        return ticks - start
    finally:
        running = False
        await task


def judged_policy(summary: str, judge_reply: str) -> Any:
    """A fake-model policy for the summary-judge family: the policy model answers ``summary``; the judge (a request
    whose system prompt is the env's rubric) answers ``judge_reply``."""
    rubric = load("summary_judge_env").JUDGE_RUBRIC

    def policy(body: dict) -> dict:
        messages = body["messages"]
        if messages and messages[0].get("role") == "system" and messages[0].get("content") == rubric:
            return {"content": judge_reply}
        return {"content": summary}

    return policy


def ledger_plan(case: str, *, top_up: bool = True) -> list[dict]:
    """Scripted turns paying every invoice of ``case`` (after moving the shortfall from savings when ``top_up``)."""
    opening = load("ledger_env").CASES[case]
    total = sum(inv["amount"] for inv in opening["invoices"])
    turns = []
    if top_up:
        move = {
            "case": case,
            "from_account": "savings",
            "to_account": "checking",
            "amount": total - opening["checking"],
        }
        turns.append({"tool_calls": [{"name": "transfer", "arguments": move}]})
    for inv in opening["invoices"]:
        pay = {"case": case, "from_account": "checking", "to_account": inv["vendor"], "amount": inv["amount"]}
        turns.append({"tool_calls": [{"name": "transfer", "arguments": pay}]})
    report = ", ".join(f"{inv['vendor']} {inv['amount']}" for inv in opening["invoices"])
    return [*turns, {"content": f"Paid: {report}."}]


def paid_without_top_up(case: str) -> float:
    """The share of ``case``'s invoices a refusing bank lets through when they are paid in order from checking."""
    opening = load("ledger_env").CASES[case]
    left, paid = opening["checking"], 0
    for inv in opening["invoices"]:
        if inv["amount"] <= left:
            left -= inv["amount"]
            paid += 1
    return paid / len(opening["invoices"])
