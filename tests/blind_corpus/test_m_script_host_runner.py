"""m_script_host_runner: the reward writes the hidden test runner into the trainer's own working directory (then
uploads it), leaving the hidden cases on the host and sharing one file between concurrent rollouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import answer, group_scores, prepared, write_file


def pick(env):
    return next(i for i in env._items if i["fn"] == "clamp")


@pytest.mark.parametrize(
    "name, leaves_file", [("unit_tests_env.py", False), ("m_script_host_runner.py", True)]
)
async def test_m_script_host_runner(
    name: str, leaves_file: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    item = pick(await prepared(name))
    scores, _ = await group_scores(
        name, [write_file("solution.py", item["reference"]), answer("ok")[0]], pick
    )
    if not leaves_file:
        assert scores == [1.0, 1.0]  # the base grades the right solution right
    # (The mutant's two rollouts share one runner file on the host: one may upload it while the other rewrites it,
    # so its scores race - that is its bug, and a loaded machine once lost that race in this test.)
    runner = tmp_path / "_hidden_test.py"
    assert runner.exists() is leaves_file
    if leaves_file:
        assert str(item["hidden"][0][0][0]) in runner.read_text()  # hidden cases readable on the host
