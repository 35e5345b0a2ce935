"""``evaluate_items``: the usual evaluate() body in one call (the corpus's good envs run it under every HC7xx check)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from hermes_envs.env import HermesAgentBaseEnv
from hermes_envs.errors import ConfigError


def test_no_eval_items_is_refused_with_the_fix():
    with pytest.raises(
        ConfigError, match=r"should get the eval items; got none.*load the eval split in setup"
    ):
        asyncio.run(HermesAgentBaseEnv.evaluate_items(SimpleNamespace(), []))  # type: ignore[arg-type]
