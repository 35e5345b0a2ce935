"""m_workspace_chdir: the reward ``os.chdir``s the whole trainer process into the rollout's sandbox, which is then
deleted; every relative path of the process (JSONL output, eval dirs, other envs) now points into a removed
folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import answer, group_scores


def cwd_or_none() -> str | None:
    try:
        return os.getcwd()
    except FileNotFoundError:  # the process sits in a deleted folder
        return None


@pytest.mark.parametrize("name, moves", [("workspace_setup_env.py", False), ("m_workspace_chdir.py", True)])
async def test_m_workspace_chdir(
    name: str, moves: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    scores, _ = await group_scores(name, answer("DONE"))
    assert scores == [0.0, 0.0]
    assert (cwd_or_none() != str(tmp_path)) is moves
