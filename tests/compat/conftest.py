"""Helpers for the upstream-compatibility suite: load our own upstream-style env files, build them offline."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

ENVS = Path(__file__).resolve().parent / "envs"


def load_env_module(stem: str) -> Any:
    """Import ``tests/compat/envs/<stem>.py`` (once) the way a user's env file is imported."""
    name = f"compat_envs_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ENVS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build(env_cls: type, base_url: str, tmp_path: Path, **overrides: Any) -> Any:
    """``env_cls`` from its own ``config_init``, pointed at ``base_url``, offline tokenizer, evals in tmp_path."""
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    from hermes_envs.testing.offline import offline_tokenizer_path
    from hermes_envs.testing.retries import disable_client_retries

    config, _ = env_cls.config_init()
    config = config.model_copy(
        update={
            "tokenizer_name": offline_tokenizer_path(),
            "use_wandb": False,
            "data_dir_to_save_evals": str(tmp_path / "evals"),
            **overrides,
        }
    )
    server = APIServerConfig(
        base_url=base_url,
        api_key="x",
        model_name="fake",
        server_type="openai",
        health_check=False,
        timeout=30,
    )
    env = env_cls(config, [server], slurm=False, testing=False)
    disable_client_retries(env.server)
    return env
