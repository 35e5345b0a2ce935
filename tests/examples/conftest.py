"""Helpers for the example-env tests: build an example against a fake server, run the documented commands."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.testing._fixtures import fake_openai  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENTS = ROOT / "environments"
SCRIPTS = ENVIRONMENTS / "scripts"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fake_openai(script=None, policy=None, **kw): configure the fake_openai fixture"
    )


def example(module: str) -> Any:
    """The example module ``environments.<module>``."""
    return importlib.import_module(f"environments.{module}")


def build(env_cls: type, base_url: str, tmp_path: Path | None = None, **overrides: Any) -> Any:
    """An example env from its own ``config_init``, pointed at ``base_url`` with the offline tokenizer."""
    from atroposlib.envs.server_handling.server_manager import APIServerConfig

    from hermes_envs.testing.offline import offline_tokenizer_path
    from hermes_envs.testing.retries import disable_client_retries

    config, _servers = env_cls.config_init()
    settings = {
        "tokenizer_name": offline_tokenizer_path(),
        "use_wandb": False,
        "group_size": 2,
        "ensure_scores_are_not_same": False,
        "data_dir_to_save_evals": str(tmp_path / "evals") if tmp_path else None,
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


def atropos_command(env_file: Path, mode: str, base_url: str, out: Path, *extra: str) -> list[str]:
    """The documented ``python ENV_FILE process|evaluate ...`` command against a fake server at ``base_url``."""
    from hermes_envs.testing.offline import offline_tokenizer_path

    cmd = [
        sys.executable,
        str(env_file),
        mode,
        "--env.use_wandb",
        "False",
        "--env.tokenizer_name",
        offline_tokenizer_path(),
        "--openai.base_url",
        base_url,
        "--openai.model_name",
        "fake",
        "--openai.api_key",
        "x",
        "--openai.health_check",
        "False",
    ]
    if mode == "process":
        cmd += [
            "--env.total_steps",
            "1",
            "--env.group_size",
            "2",
            "--env.data_path_to_save_groups",
            str(out / f"{env_file.stem}.jsonl"),
        ]
    else:
        cmd += ["--env.data_dir_to_save_evals", str(out / "evals")]
    return cmd + list(extra)


def run_command(cmd: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run a documented command offline (no Hub, no wandb), from the repo root."""
    from hermes_envs.testing.offline import offline_environ

    env = {**os.environ, **offline_environ()}
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False
    )
