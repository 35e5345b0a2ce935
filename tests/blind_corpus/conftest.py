"""Helpers for the blind-corpus proofs: load an env file of conformance/blind/ by name, build it against a fake
model server (offline tokenizer, no retries), and run one group or one evaluation through the public API."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from hermes_envs.testing.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
BLIND = ROOT / "conformance" / "blind"


def load(filename: str) -> Any:
    """The module of ``conformance/blind/<filename>`` (imported once, under a private name)."""
    name = f"_blind_corpus_{Path(filename).stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BLIND / filename)
    assert spec and spec.loader, filename
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def env_class(module: Any) -> type:
    """The env class the file defines (a BaseEnv subclass declared in that module)."""
    from atroposlib.envs.base import BaseEnv

    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, BaseEnv) and obj.__module__ == module.__name__
    ]
    assert len(found) == 1, found
    return found[0]


def build(filename: str, base_url: str, **overrides: Any) -> Any:
    """An env of the corpus from its own ``config_init``, pointed at ``base_url``, group size 2, no wandb."""
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    from hermes_envs.testing.offline import offline_tokenizer_path
    from hermes_envs.testing.retries import disable_client_retries

    cls = env_class(load(filename))
    config, _servers = cls.config_init()
    settings = {
        "tokenizer_name": offline_tokenizer_path(),
        "use_wandb": False,
        "group_size": 2,
        "ensure_scores_are_not_same": False,
        **overrides,
    }
    config = config.model_copy(update=settings)
    servers = [
        APIServerConfig(
            base_url=base_url,
            api_key="x",
            model_name="fake",
            server_type="openai",
            health_check=False,
            timeout=30,
        )
    ]
    env = cls(config, servers, slurm=False, testing=False)
    disable_client_retries(env.server)
    return env


async def group_scores(
    filename: str, script: Any, pick: Any = None, **overrides: Any
) -> tuple[list[float], Any]:
    """Scores of one group of ``filename``'s env on the item ``pick(env)`` (default: its first training item),
    with the fake model playing ``script``; also returns the env."""
    with FakeOpenAIServer(script=script) as server:
        env = build(filename, server.base_url, **overrides)
        await env.setup()
        item = pick(env) if pick else env._items[0]
        group, _ = await env.collect_trajectories(item)
        server.assert_no_failures()
        return (group["scores"] if group else None), env


def answer(text: str) -> list[dict[str, Any]]:
    """A one-turn script: the model answers ``text`` without tools."""
    return [{"content": text}]


async def prepared(filename: str, **overrides: Any) -> Any:
    """The env of ``filename`` after ``setup()``, pointed at a closed local port (for reading its items)."""
    env = build(filename, "http://127.0.0.1:9/v1", **overrides)
    await env.setup()
    return env


def write_file(path: str, content: str) -> dict[str, Any]:
    """A model turn that saves ``content`` at ``path`` with the file tool."""
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


def terminal(command: str) -> dict[str, Any]:
    """A model turn that runs ``command`` in the terminal."""
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}
