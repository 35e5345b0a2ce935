"""m_sql_shared_db_file: every rollout's run_sql opens one database file in the host's temp folder, so one rollout's
DELETE changes the data every other rollout (and every later group) sees, and the file outlives the run."""

from __future__ import annotations

import tempfile
import uuid

import pytest
from blind4_helpers import dispatch, ready

from hermes_envs.tools import cleanup_sandbox, get_sandbox


@pytest.mark.parametrize(("name", "shared"), [("m_sql_shared_db_file", True), ("sql_env", False)])
async def test_one_rollouts_delete_shows_in_another(name: str, shared: bool, tmp_path, monkeypatch) -> None:
    await ready(name)
    a, b = f"b4-{uuid.uuid4()}", f"b4-{uuid.uuid4()}"
    get_sandbox(a)  # the sandbox root exists before the host temp folder is redirected
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the host temp folder, private to this test
    try:
        assert "error" not in await dispatch("run_sql", {"query": "DELETE FROM orders"}, a)
        seen_by_b = await dispatch("run_sql", {"query": "SELECT COUNT(*) FROM orders"}, b)
    finally:
        cleanup_sandbox(a)
        cleanup_sandbox(b)
    assert seen_by_b == ("[[0]]" if shared else "[[10]]")
    assert [p.name for p in tmp_path.iterdir()] == (["shop.db"] if shared else [])  # left on the host
