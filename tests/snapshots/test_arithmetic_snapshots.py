"""Rewards and transcripts of the example env, pinned: replayed from a recorded cassette, compared with snapshots.

Re-record (against any OpenAI-compatible provider) and refresh with::

    pytest tests/snapshots --hermes-record --hermes-base-url URL --hermes-model NAME --snapshot-update
"""

from __future__ import annotations

ENV = "environments/arithmetic_env.py"


def test_arithmetic_rewards(recorded_rollouts, reward_snapshot) -> None:
    run = recorded_rollouts(ENV, items=2, group_size=2)
    assert run.rewards == reward_snapshot


def test_arithmetic_transcripts(recorded_rollouts, transcript_snapshot) -> None:
    run = recorded_rollouts(ENV, items=1, group_size=1)
    assert run.transcripts == transcript_snapshot
