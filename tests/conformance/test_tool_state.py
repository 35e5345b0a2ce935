"""HC605 (tool state per rollout) judges only what replays: tools whose answers vary run to run (a dice roll, a
clock) are not blamed, per-task state passes, and state left behind or shared across rollouts is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_ENV = '''
import random, sys, threading, time
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv
from hermes_envs.tools import registry

_STATE = {{}}
_LOCK = threading.Lock()


def {tool}(letter: str, task_id: str) -> str:
    """A tool of the env's own.

    Args:
        letter: A letter.
    """
    with _LOCK:
{body}


class ToolEnv(LetterCountEnv):
    name = "tool-state-{tool}"

    @classmethod
    def config_init(cls):
        config, servers = super().config_init()
        config.enabled_toolsets = ["{tool}_set"]
        return config, servers

    async def setup(self):
        registry.tool({tool}, toolset="{tool}_set")
        await super().setup()
'''

#: tool name -> (its body, HC605's outcome)
CASES = {
    # random answers, nothing kept: nothing to judge
    "roll_die": (
        "        return f'you rolled {random.randint(1, 6)} and drew ' + random.choice('abcdefgh')",
        Status.SKIPPED,
    ),
    # a clock in every answer, state per task: passes (the numbers are masked)
    "stamp_letter": (
        "        _STATE.setdefault(task_id, []).append(letter)\n"
        "        return f'at {time.time():.6f}: ' + ','.join(_STATE[task_id])",
        Status.PASSED,
    ),
    # one shared 'last letter' for everybody: a later rollout sees the one before's
    "last_letter": (
        "        before = _STATE.get('last', 'none')\n        _STATE['last'] = letter\n"
        "        return f'previous letter: {before}'",
        Status.FAILED,
    ),
}


@pytest.mark.parametrize("tool", sorted(CASES))
def test_hc605_blames_only_state_that_replays(tool: str, tmp_path: Path) -> None:
    body, expected = CASES[tool]
    env = tmp_path / f"{tool}_env.py"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), tool=tool, body=body))
    from hermes_envs.tools import registry

    with (
        registry.isolated(),
        EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC605"])) as session,
    ):
        outcome = session.run("HC605")
    assert outcome.status is expected, (outcome.note, [f.render() for f in outcome.findings])
    if expected is Status.FAILED:
        (finding,) = outcome.findings
        assert finding.subject == f"tool {tool}" and "task_id" in finding.fix


def test_hc605_skips_tools_too_slow_to_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A correct env whose tools are slow (a long build, a remote call) must not crash the check on its timeout."""
    from hermes_envs.conformance.checks import tool_state

    monkeypatch.setattr(tool_state, "RUN_SECONDS", 0.3)
    env = tmp_path / "slow_tool_env.py"
    body = "        pass\n    time.sleep(1.0)\n    return 'checked ' + letter"
    env.write_text(_ENV.format(bad=str(CORPUS / "bad"), tool="slow_check", body=body))
    from hermes_envs.tools import registry

    with (
        registry.isolated(),
        EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC605"])) as session,
    ):
        outcome = session.run("HC605")
    assert outcome.status is Status.SKIPPED and "too slow to replay" in (outcome.note or ""), outcome
