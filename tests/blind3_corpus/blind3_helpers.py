"""Helpers for the blind3 corpus proofs (imported by the tests through the path conftest.py adds): load an env file of conformance/blind3/ by name, build it offline, and
make transcripts and sandboxes by hand (public API only: hermes_envs, hermes_envs.testing, environments.*)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "blind3"


def load(name: str) -> ModuleType:
    """Import ``conformance/blind3/<name>.py`` once per session under a private module name."""
    mod_name = f"blind3_corpus_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, CORPUS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


def env_class(module: ModuleType) -> type:
    """The env class a corpus file defines (the one whose module is this file)."""
    from atroposlib.envs.base import BaseEnv

    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, BaseEnv) and v.__module__ == module.__name__
    ]
    assert len(found) == 1, found
    return found[0]


def build(name: str, base_url: str = "http://127.0.0.1:9/v1", **overrides: Any) -> Any:
    """The env of corpus file ``name`` from its own config_init, offline tokenizer, a given model URL."""
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


def transcript(prompt: str, *turns: dict[str, Any]) -> Any:
    """An AgentResult: the user prompt, then the given assistant/tool messages, ended naturally."""
    from hermes_envs import AgentResult

    messages = [{"role": "user", "content": prompt}, *turns]
    assistants = sum(1 for m in messages if m["role"] == "assistant")
    return AgentResult(messages=messages, turns_used=assistants, finished_naturally=True)


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> dict[str, Any]:
    """An assistant message making one tool call (arguments as a dict, or a raw string sent verbatim)."""
    import json

    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
    }


def answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_result(content: str, call_id: str = "c1") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
