"""Helpers for the blind2 corpus proofs: load a corpus file by path, build its env against a fake model server."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from typing import Any

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from hermes_envs.testing.offline import offline_tokenizer_path
from hermes_envs.testing.retries import disable_client_retries

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "blind2"
_counter = itertools.count()


def load(stem: str) -> Any:
    """Import ``conformance/blind2/<stem>.py`` afresh (its tools are registered again, so the env under test uses
    its own tool definitions, not those of a sibling file imported earlier)."""
    path = CORPUS / f"{stem}.py"
    name = f"blind2_{stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build(env_cls: type, base_url: str, **overrides: Any) -> Any:
    """The env from its own ``config_init``, pointed at ``base_url``, offline tokenizer, no wandb, group of 2."""
    config, _servers = env_cls.config_init()
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
    env = env_cls(config, servers, slurm=False, testing=False)
    disable_client_retries(env.server)
    return env


async def group_scores(
    module: Any, env_cls_name: str, server: Any, item: Any, **overrides: Any
) -> list[float]:
    """Scores of one group of ``item`` played by ``server``'s script or policy."""
    env = build(getattr(module, env_cls_name), server.base_url, **overrides)
    await env.setup()
    group, _ = await env.collect_trajectories(item)
    return list(group["scores"])


def save_solution_script(path: str, source: str, reply: str = "Saved.") -> list[dict[str, Any]]:
    """Model turns: write ``source`` to ``path`` with the file tool, then a final reply."""
    return [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": source}}]},
        {"content": reply},
    ]
