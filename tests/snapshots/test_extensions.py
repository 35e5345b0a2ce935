"""The reward and transcript snapshot extensions, without running an env."""

from __future__ import annotations

import math

import pytest

from hermes_envs.testing.snapshots import (
    RewardSnapshotExtension,
    format_rewards,
    normalize_transcript,
    parse_rewards,
)

pytest_plugins = ["pytester"]


def _matches(ext: RewardSnapshotExtension, got: object, stored: str) -> bool:
    return ext.matches(serialized_data=ext.serialize(got), snapshot_data=stored)


def test_format_and_parse_round_trip() -> None:
    text = format_rewards([[1.0, 0.1], [0.0, float("nan")]], 1e-6)
    assert text.splitlines()[1:] == ["tolerance: 1e-06", "item 0: 1 0.1", "item 1: 0 nan"]
    tol, rows = parse_rewards(text)
    assert tol == 1e-6 and rows[0] == ("item 0", [1.0, 0.1]) and math.isnan(rows[1][1][1])


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        ([0.5, 1.0], ["item 0: 0.5", "item 1: 1"]),
        ({"easy": [1, 1], "hard": 0.25}, ["easy: 1 1", "hard: 0.25"]),
    ],
)
def test_accepted_shapes(data: object, lines: list[str]) -> None:
    assert format_rewards(data, 0.01).splitlines()[2:] == lines


def test_the_stored_tolerance_decides() -> None:
    ext = RewardSnapshotExtension()
    stored = format_rewards([[1.0, 0.5]], 0.01)
    assert _matches(ext, [[1.0, 0.505]], stored)
    assert not _matches(ext, [[1.0, 0.52]], stored)
    assert not _matches(ext, [[1.0]], stored)  # a missing rollout
    assert not _matches(ext, [[1.0, 0.5], [1.0]], stored)  # an extra item
    loose = RewardSnapshotExtension.with_tolerance(0.1)
    assert loose.tolerance == 0.1 and "tolerance: 0.1" in loose.__new__(loose).serialize([1.0])


def test_transcripts_are_normalized() -> None:
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_Xy9", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_Xy9",
            "content": "ran in /tmp/hermes-abc/x at 2026-11-30T01:02:03Z (task 4f9c1b2e-1111-2222-3333-444455556666, 0.42 s)",
        },
        {"role": "assistant", "content": "done", "created": 1796002778},
    ]
    out = normalize_transcript(messages)
    assert out[0]["tool_calls"][0]["id"] == "call_1" and out[1]["tool_call_id"] == "call_1"
    assert out[1]["content"] == "ran in <tmp> at <time> (task <uuid>, <duration>)"
    assert out[2]["created"] == "<created>"
    assert normalize_transcript(messages) == out  # stable


UPDATE_TEST = """
import os

def test_rewards(reward_snapshot):
    assert [float(x) for x in os.environ["REWARDS"].split()] == reward_snapshot
"""


def test_snapshot_update_keeps_the_tolerance_edited_in_the_file(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    pytester.makepyfile(test_r=UPDATE_TEST)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    snap = pytester.path / "__snapshots__" / "test_r" / "test_rewards.rewards"
    monkeypatch.setenv("REWARDS", "1 0.5")
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    snap.write_text(snap.read_text().replace("tolerance: 1e-06", "tolerance: 0.1"))
    monkeypatch.setenv("REWARDS", "1 0.55")  # within the edited tolerance
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    monkeypatch.setenv("REWARDS", "0 0.5")  # an intended change, accepted with --snapshot-update
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(failed=1)
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    assert snap.read_text().splitlines()[1:] == ["tolerance: 0.1", "item 0: 0", "item 1: 0.5"]
    monkeypatch.setenv("REWARDS", "0.05 0.5")  # the kept tolerance still decides
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_snapshot_update_writes_a_tolerance_chosen_in_code(pytester: pytest.Pytester, monkeypatch) -> None:
    pytester.makepyfile(
        test_r=UPDATE_TEST.replace(
            "def test_rewards(reward_snapshot):",
            "from hermes_envs.testing.snapshots import RewardSnapshotExtension\n\n"
            "def test_rewards(snapshot):\n"
            "    reward_snapshot = snapshot.use_extension(RewardSnapshotExtension.with_tolerance(0.01))",
        )
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    snap = pytester.path / "__snapshots__" / "test_r" / "test_rewards.rewards"
    snap.parent.mkdir(parents=True)
    snap.write_text(format_rewards([1.0, 0.0], 0.5))
    monkeypatch.setenv("REWARDS", "1 1")
    pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(passed=1)
    assert snap.read_text().splitlines()[1] == "tolerance: 0.01"


def test_a_snapshot_kept_after_a_failure_is_not_reported_as_passed(pytester: pytest.Pytester) -> None:
    """Under --snapshot-update, a test that fails before its assertion keeps its pinned rewards (with a warning);
    syrupy's summary must not call that kept snapshot "passed": nothing was compared."""
    pytester.makepyfile(
        test_r="def test_rewards(reward_snapshot):\n    raise RuntimeError('the recording failed')\n"
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    snap = pytester.path / "__snapshots__" / "test_r" / "test_rewards.rewards"
    snap.parent.mkdir(parents=True)
    snap.write_text(format_rewards([1.0, 0.0], 1e-06))
    pinned = snap.read_text()
    result = pytester.runpytest("-p", "no:cacheprovider", "--snapshot-update")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "was kept: the test did not reach its snapshot assertion" in out
    assert "snapshot passed" not in out and "snapshots passed" not in out, out[-2000:]
    assert snap.read_text() == pinned
