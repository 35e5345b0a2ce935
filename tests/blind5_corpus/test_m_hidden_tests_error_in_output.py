"""m_hidden_tests_error_in_output: a hidden case passes when its output holds no "Error". A case killed on the timeout
prints none (exit code 124 and a note), so a solution that hangs passes every case."""

from __future__ import annotations

import pytest
from blind5_helpers import group_scores, load, ready, write_file_turn


@pytest.mark.parametrize(
    ("name", "hang_passes"), [("hidden_tests_env", False), ("m_hidden_tests_error_in_output", True)]
)
async def test_a_hanging_solution_fails(
    name: str, hang_passes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        load(name), "CASE_TIMEOUT", 1
    )  # keep the proof short: each hidden case is killed after 1 s
    env = await ready(name)
    item = env.train_items[7]  # digital_root
    hangs = f"import time\n\ndef {item['fn']}(*args):\n    time.sleep(3600)\n"
    scores = await group_scores(
        name, item, [write_file_turn("solution.py", hangs), {"content": "Done."}], group_size=1
    )
    assert scores == ([1.0] if hang_passes else [0.0])
    wrong = f"def {item['fn']}(*args):\n    return -1\n"
    assert await group_scores(name, item, [write_file_turn("solution.py", wrong), {"content": "Done."}]) == [
        0.0,
        0.0,
    ]
