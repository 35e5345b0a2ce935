"""A changed reward fails an example's snapshot test with a readable diff (pytester, offline).

The inner project holds two copies of ``environments/file_task_env.py`` — as shipped, and with its partial-credit
weights changed — and one test per copy replaying the committed ``file_task-partial`` cassette against the
committed snapshot (both from ``test_recorded_rewards.py``). The shipped copy passes; the changed one fails and
the failure shows the rewards per item, snapshot (-) against received (+).
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

# pytester restores sys.modules after each inner run and atroposlib's native dependencies cannot be imported twice
# per process: import what the inner run uses now, at collection (as tests/recording/test_pytest_flow.py does).
PRELOAD = (
    "atroposlib.envs.base",
    "environments.agent_loop",
    "environments.hermes_base_env",
    "environments.tool_context",
    "hermes_envs.env._loader",
    "hermes_envs.testing.cassettes",
    "hermes_envs.testing.recording",
    "hermes_envs.testing._redaction",
    "hermes_envs.testing.snapshots",
    "openai",
    "vcr",
)
for _name in PRELOAD:
    importlib.import_module(_name)
importlib.import_module("hermes_envs.testing.offline").load_offline_tokenizer()

pytest_plugins = ["pytester"]

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
CASE = "test_rewards[file_task-partial]"
WEIGHTS = "W_EXISTS, W_RUNS, W_OUTPUT = 0.1, 0.2, 0.7\n"
TESTS = """
import pytest


@pytest.mark.parametrize("env", ["file_task_env.py", "file_task_env_reweighted.py"])
def test_rewards(env, recorded_rollouts, reward_snapshot):
    run = recorded_rollouts(env, items=2, group_size=2, cassette="partial.yaml")
    assert run.rewards == reward_snapshot
"""


@pytest.mark.slow  # about 6 s: an inner pytest run replaying two cassettes through the file task's sandboxes
def test_a_reweighted_reward_fails_its_snapshot_with_a_diff(pytester: pytest.Pytester) -> None:
    shipped = (ROOT / "environments" / "file_task_env.py").read_text(encoding="utf-8")
    assert WEIGHTS in shipped
    (pytester.path / "file_task_env.py").write_text(shipped, encoding="utf-8")
    (pytester.path / "file_task_env_reweighted.py").write_text(
        shipped.replace(WEIGHTS, "W_EXISTS, W_RUNS, W_OUTPUT = 0.2, 0.2, 0.6\n"), encoding="utf-8"
    )
    shutil.copy(HERE / "cassettes" / "test_recorded_rewards" / f"{CASE}.yaml", pytester.path / "partial.yaml")
    snapshots = pytester.path / "__snapshots__" / "test_partial"
    snapshots.mkdir(parents=True)
    pinned = HERE / "__snapshots__" / "test_recorded_rewards" / f"{CASE}.rewards"
    for env in ("file_task_env.py", "file_task_env_reweighted.py"):
        shutil.copy(pinned, snapshots / f"test_rewards[{env}].rewards")
    assert pinned.read_text().splitlines()[-2:] == ["item 0: 0.1 0.1", "item 1: 0.3 0.3"]
    pytester.makepyfile(test_partial=TESTS)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_rewards*file_task_env_reweighted.py*",
            "*tolerance: 1e-06*",
            "*- item 0: 0.1 0.1*",
            "*+ item 0: 0.2 0.2*",
            "*- item 1: 0.3 0.3*",
            "*+ item 1: 0.4 0.4*",
        ]
    )
    result.stdout.no_fnmatch_line("*not in the cassette*")  # the same requests: only the reward changed
