"""The three examples' recorded episodes: good and bad scripted transcripts, replayed offline, rewards pinned.

Each case in ``CASES`` is a scripted transcript: what the model says for every item the env serves (and, for the
judge example, what the judge answers). Its cassette, ``cassettes/test_recorded_rewards/test_rewards[<case>].yaml``,
holds the env's real rollouts (its own ``collect_trajectories``, agent loop, tools and sandbox) against
:class:`FakeOpenAIServer` playing that script. ``test_rewards`` replays it with record mode ``none`` — the network
guard is on (a connection beyond loopback fails) and a request the cassette does not hold fails the test — and
compares the rewards with ``__snapshots__/test_recorded_rewards/test_rewards[<case>].rewards``.
``test_snapshots_rank_the_transcripts`` checks what the pinned rewards must say (good above bad, partial credit,
the judge's keyword fallback), so a refreshed snapshot cannot quietly pin a broken reward.

Re-record every cassette and refresh the snapshots with one command (no key; nothing leaves 127.0.0.1)::

    .venv/bin/pytest tests/examples/test_recorded_rewards.py --hermes-record --snapshot-update

While recording, ``hermes_provider`` (overridden below) starts a strict fake server on loopback with the case's
script, so ``--hermes-base-url`` is not needed (and not used: a real model would not follow the script).
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.snapshots import parse_rewards

from .conftest import build, example

HERE = Path(__file__).parent
ITEMS, GROUP_SIZE = 2, 2
Turns = list[dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """A scripted transcript for one example: the model's turns per item, and the judge's reply (judge_env)."""

    module: str
    env_class: str
    turns: Callable[[dict], Turns]
    judge: str | None = None

    @property
    def env_file(self) -> str:
        return f"environments/{self.module}.py"


# ------------------------------------------------------------------------------------------------- transcripts
def _terminal(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "terminal", "arguments": {"command": command}}]}


def arithmetic(offset: int) -> Callable[[dict], Turns]:
    """Compute with the terminal, then answer (``offset`` away from the right integer)."""

    def turns(item: dict) -> Turns:
        value = int(item["answer"])
        return [
            _terminal(f"python3 -c 'print({item['expression']})'"),
            {"content": f"The terminal says {value}.\nAnswer: {value + offset}"},
        ]

    return turns


def file_task(content_key: str | None, run: str = "python3 task.py") -> Callable[[dict], Turns]:
    """Save ``item[content_key]`` as task.py, run it, report; ``None``: only claim a fix (nothing saved)."""

    def turns(item: dict) -> Turns:
        if content_key is None:
            return [{"content": "I fixed the script; it works now."}]
        return [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "task.py", "content": item[content_key]}}
                ]
            },
            _terminal(run),
            {"content": "Fixed the bug; the script prints the expected output now."},
        ]

    return turns


def judged(answer: Callable[[dict], str]) -> Callable[[dict], Turns]:
    """Run the snippet in the terminal, then explain it with ``answer(item)``."""
    return lambda item: [_terminal(f"python3 -c {shlex.quote(item['snippet'])}"), {"content": answer(item)}]


def first_keyword_only(item: dict) -> str:
    return f"It prints {item['keywords'][0]}."


CASES: dict[str, Case] = {
    "arithmetic-good": Case("arithmetic_env", "ArithmeticTerminalEnv", arithmetic(0)),
    "arithmetic-bad": Case("arithmetic_env", "ArithmeticTerminalEnv", arithmetic(1)),  # misreads the terminal
    "file_task-good": Case("file_task_env", "FileTaskEnv", file_task("solution")),
    # saves the bug back. Run from stdin: a crash's traceback then names <stdin>, not the sandbox's temp folder,
    # whose random name the cassette matcher does not normalize (it would never replay).
    "file_task-partial": Case("file_task_env", "FileTaskEnv", file_task("buggy", "python3 - < task.py")),
    "file_task-bad": Case("file_task_env", "FileTaskEnv", file_task(None)),
    "judge-good": Case("judge_env", "JudgeEnv", judged(lambda item: item["reference"]), judge="9"),
    "judge-bad": Case("judge_env", "JudgeEnv", judged(lambda item: "It prints some numbers."), judge="2"),
    # the judge answers something that is not a 0-10 score: the reward is the share of keywords mentioned
    "judge-garbage": Case("judge_env", "JudgeEnv", judged(first_keyword_only), judge="Great explanation!"),
}


def script_for(case: Case, env: Any, items: list[dict]) -> dict[str, Any]:
    """A keyed script: each item's prompt gets ``case.turns(item)``; the judge's requests get ``case.judge``."""
    scripts: dict[str, Any] = {
        f"^{re.escape(env.format_prompt(item))}$": {"turns": case.turns(item)} for item in items
    }
    if case.judge is not None:
        scripts["^Snippet:"] = {"turns": [{"content": case.judge}]}
    return {"scripts": scripts}


def env_of(case: Case) -> Any:
    """The example env, built offline (no server is contacted)."""
    return build(getattr(example(case.module), case.env_class), "http://127.0.0.1:9/v1")


async def served_items(env: Any, n: int) -> list[dict]:
    """The first ``n`` items the env serves (seeded: the same as in the recorded and the replayed run)."""
    await env.setup()
    return [await env.get_next_item() for _ in range(n)]


def snapshot_file(case: str) -> Path:
    return HERE / "__snapshots__" / "test_recorded_rewards" / f"test_rewards[{case}].rewards"


# ----------------------------------------------------------------------------------------------------- fixtures
def _recording(config: pytest.Config) -> bool:
    mode = config.getoption("hermes_record_mode", default=None)
    return bool(config.getoption("hermes_record", default=False)) or mode not in (None, "none")


@pytest.fixture
def hermes_provider(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Replay: None (the cassette says where it was recorded). Recording: a strict fake server with the case's
    script on 127.0.0.1; the test fails if the env sent a request the script does not cover."""
    if not _recording(request.config):
        yield None
        return
    from hermes_envs.testing.recording import Provider

    case = CASES[request.node.callspec.params["case"]]
    env = env_of(case)
    items = asyncio.run(served_items(env, ITEMS))
    with FakeOpenAIServer(script=script_for(case, env, items), strict=True, model="fake-model") as server:
        yield Provider(base_url=server.base_url, model="fake-model")
        server.assert_no_failures()


# -------------------------------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("case", list(CASES))
def test_rewards(case: str, recorded_rollouts: Any, reward_snapshot: Any) -> None:
    run = recorded_rollouts(CASES[case].env_file, items=ITEMS, group_size=GROUP_SIZE)
    session = run.cassette
    if not session.recording:  # replayed offline, every recorded request served once, nothing else asked
        assert session.record_mode == "none" and session.played == len(session.old) > 0
    assert [len(r) for r in run.rewards] == [GROUP_SIZE] * ITEMS
    assert run.rewards == reward_snapshot


def _pinned(case: str) -> list[list[float]]:
    _tolerance, rows = parse_rewards(snapshot_file(case).read_text(encoding="utf-8"))
    return [values for _label, values in rows]


def test_snapshots_rank_the_transcripts() -> None:
    """What the pinned rewards must show; runs no env, so it also guards a careless ``--snapshot-update``."""
    r = {case: _pinned(case) for case in CASES}
    flat = {case: [x for row in rows for x in row] for case, rows in r.items()}
    for case, values in flat.items():
        assert len(values) == ITEMS * GROUP_SIZE and all(0.0 <= x <= 1.0 for x in values), (case, values)

    assert set(flat["arithmetic-good"]) == {1.0}
    assert set(flat["arithmetic-bad"]) == {0.1}  # wrong answer: only the credit for using the terminal

    assert set(flat["file_task-good"]) == {1.0}
    assert all(0.0 < x < 1.0 for x in flat["file_task-partial"])  # saved and run, but still buggy
    assert set(flat["file_task-bad"]) == {0.0}  # claims a fix, saves nothing

    assert min(flat["judge-good"]) > max(flat["judge-bad"])
    # a garbage judge reply: the keyword share alone (the judge's weight is not applied)
    env = env_of(CASES["judge-garbage"])
    items = asyncio.run(served_items(env, ITEMS))
    expected = [
        env._keyword_score(item, first_keyword_only(item)) for item in items for _ in range(GROUP_SIZE)
    ]
    assert flat["judge-garbage"] == pytest.approx(expected) and all(0.0 < x < 1.0 for x in expected)


def test_no_committed_cassette_holds_a_secret() -> None:
    """The secret lint over every cassette (and snapshot) under tests/: key shapes and *_API_KEY values."""
    from hermes_envs.testing import lint_paths

    tests = HERE.parent
    cassettes = sorted(tests.glob("**/cassettes/**/*.yaml"))
    assert {f"test_rewards[{case}].yaml" for case in CASES} <= {p.name for p in cassettes}
    findings = lint_paths([tests])
    assert not findings, "\n".join(map(str, findings))
