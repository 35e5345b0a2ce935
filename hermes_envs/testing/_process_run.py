"""``python env.py process ...`` against a fake model server, offline: the command and the run, in one place.

Used by the demo (the README's first command), by the HC503 conformance check and by tests, so the three always
run the same command line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["process_command", "run_process"]


def process_command(
    env_file: str | Path,
    out_path: str | Path,
    base_url: str,
    *,
    steps: int = 1,
    group_size: int = 2,
    server_type: str = "openai",
    extra: list[str] | None = None,
) -> list[str]:
    """The argv of a ``process`` run of ``env_file`` against ``base_url``, with the offline tokenizer and no wandb,
    writing the JSONL of scored groups to ``out_path`` (atroposlib writes the HTML view beside it)."""
    from hermes_envs.testing.offline import offline_tokenizer_path

    return [
        sys.executable, str(env_file), "process",
        "--env.total_steps", str(steps),
        "--env.group_size", str(group_size),
        "--env.use_wandb", "False",
        "--env.tokenizer_name", offline_tokenizer_path(),
        "--env.data_path_to_save_groups", str(out_path),
        "--openai.base_url", base_url,
        "--openai.model_name", "fake",
        "--openai.api_key", "x",
        "--openai.health_check", "False",
        "--openai.server_type", server_type,
        "--openai.tokenizer_name", offline_tokenizer_path(),
        *(extra or []),
    ]  # fmt: skip


def run_process(
    env_file: str | Path,
    out_dir: str | Path,
    base_url: str,
    *,
    out_path: str | Path | None = None,
    timeout: float = 300,
    cwd: str | Path | None = None,
    **options: object,
) -> subprocess.CompletedProcess[str]:
    """Run :func:`process_command` offline; the JSONL goes to ``out_path`` (default ``out_dir/<env stem>.jsonl``).

    ``server_type`` "vllm" / "sglang" runs Phase 2 (token endpoints, exact tokens) instead of OpenAI tool_calls.
    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
    """
    from hermes_envs.testing.offline import offline_environ

    env_file = Path(env_file)
    out = Path(out_path) if out_path is not None else Path(out_dir) / f"{env_file.stem}.jsonl"
    cmd = process_command(env_file, out, base_url, **options)  # type: ignore[arg-type]
    env = {**os.environ, **offline_environ()}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd, check=False)
