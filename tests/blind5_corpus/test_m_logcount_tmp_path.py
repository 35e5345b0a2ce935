"""m_logcount_tmp_path: the file is asked for (and read back) at the absolute path /tmp/status_counts.json. With the
local backend that is the host's /tmp, one file for every rollout: a rollout that did nothing is scored with the file
another rollout (or an earlier group) left there."""

from __future__ import annotations

import json
import os
import shlex
import uuid

import pytest
from blind5_helpers import dispatch, load, ready, transcript

from hermes_envs.tools import ToolContext


@pytest.mark.parametrize(("name", "shared"), [("logcount_env", False), ("m_logcount_tmp_path", True)])
async def test_an_idle_rollout_is_not_scored_with_another_rollouts_file(name: str, shared: bool) -> None:
    env = await ready(name)
    path = load(name).OUTPUT_FILE
    item = env.train_items[3]
    worker, idler = f"blind5-w-{uuid.uuid4()}", f"blind5-i-{uuid.uuid4()}"
    try:
        # The first rollout saves the right counts where the prompt says, with the terminal as a model would.
        command = f"printf '%s' {shlex.quote(json.dumps(item['counts']))} > {path}"
        assert json.loads(await dispatch("terminal", {"command": command}, worker))["exit_code"] == 0
        idle = transcript(env.format_prompt(item), {"role": "assistant", "content": "Saved the file."})
        ctx = ToolContext(idler)
        try:
            score = await env.compute_reward(item, idle, ctx)
        finally:
            ctx.cleanup()
            ToolContext(worker).cleanup()
    finally:
        if os.path.isabs(path) and os.path.exists(path):
            os.remove(path)
    assert (score == 1.0) is shared, score
    if not shared:
        assert score == 0.0
