"""Helpers of the blind4 corpus proofs: load an env file of conformance/blind4/ by name, build it offline against a
given model URL, write transcripts by hand, and run a group through the real agent loop on a scripted fake model."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "blind4"
NOWHERE = "http://127.0.0.1:9/v1"


def load(name: str) -> ModuleType:
    """Import ``conformance/blind4/<name>.py`` once per session under a private module name."""
    mod_name = f"blind4_corpus_{name}"
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
    """Scores of one group of ``item`` collected through the env's own collect_trajectories on a scripted model."""
    from hermes_envs.testing.fake_server import FakeOpenAIServer

    with FakeOpenAIServer(script=script) as srv:
        env = await ready(name, srv.base_url, **overrides)
        group, _ = await env.collect_trajectories(item)
        srv.assert_no_failures()
    assert group is not None
    return list(group["scores"])


async def dispatch(name: str, arguments: dict[str, Any], task_id: str) -> str:
    """Call a registered tool as the agent loop does."""
    from hermes_envs.tools import registry

    return await registry.adispatch(name, arguments, task_id)


def winning_line(start: str) -> list[int] | None:
    """X's moves (1-9) that beat the env's deterministic opponent from ``start``, if there are any."""
    ttt = load("tictactoe_env")

    def search(board: list[str]) -> list[int] | None:
        for i in range(9):
            if board[i] != ".":
                continue
            after = board.copy()
            after[i] = "X"
            if ttt.winner(after) == "X":
                return [i + 1]
            if "." not in after:
                continue
            after[ttt.opponent_move(after)] = "O"
            if ttt.winner(after) is None:
                rest = search(after)
                if rest is not None:
                    return [i + 1, *rest]
        return None

    return search(list(start))


def ttt_script(item: dict, moves: list[int]) -> list[dict]:
    calls = [
        {"tool_calls": [{"name": "play", "arguments": {"game_id": item["game_id"], "cell": c}}]}
        for c in moves
    ]
    return [*calls, {"content": "I won."}]


def json_reply(record: dict) -> str:
    """A perfect extraction reply for the json_extract env family."""
    return "Here is the record:\n```json\n" + json.dumps(record, indent=2) + "\n```"


def user_prompts(srv: Any) -> list[str]:
    """The last user message of every chat request the fake server answered."""
    out = []
    for c in srv.calls:
        messages = (c.body or {}).get("messages") or []
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        if users:
            out.append(users[-1])
    return out


def chain_solver(env: Any) -> Any:
    """A fake-model policy answering every curriculum-chain prompt of ``env``'s eval set correctly."""
    answers = {env.format_prompt(i): i["answer"] for i in env._eval_items}

    def policy(body: dict) -> dict:
        prompt = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
        return {"content": f"Answer: {answers.get(prompt, 0)}"}

    return policy
