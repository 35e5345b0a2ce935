"""m_filetree_host_download: the reward must inspect the sandbox, not leave copies of it in the host's temp folder."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from blind3_helpers import answer, build, transcript


async def _host_leftovers(
    name: str, ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[float, bool]:
    env = build(name)
    await env.setup()
    item = env._items[0]
    for entry in item["files"]:
        ctx.write_file(entry["path"], "\n".join(entry["contains"]) + "\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the host's temp folder, for the reward's run
    score = await env.compute_reward(item, transcript(env.format_prompt(item), answer("done")), ctx)
    return score, (tmp_path / "filetree-review").exists()


async def test_correct_env_leaves_no_copy_on_the_host(
    ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await _host_leftovers("filetree_env", ctx, tmp_path, monkeypatch) == (1.0, False)


async def test_mutant_leaves_a_copy_of_the_rollouts_files_on_the_host(
    ctx: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await _host_leftovers("m_filetree_host_download", ctx, tmp_path, monkeypatch) == (1.0, True)
