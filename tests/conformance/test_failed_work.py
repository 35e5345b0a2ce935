"""HC414 (issue 29, faults): tool calls that all failed earn no credit. The mutant credits the write_file call in the
transcript; correct rewards of other shapes (reading each call's tool result, a small bonus for trying, a gate that
still needs the right answer) stay clean."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._findings import Severity
from hermes_envs.conformance._replay import GONE, REPRODUCED, replay, write_counterexamples

from .corpus import CORPUS, CORPUS_SETTINGS

_HEAD = """
import json
import sys
sys.path.insert(0, {bad!r})
from _good import FileWriteEnv


def _writes(result):
    for message in result.messages:
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] == "write_file":
                yield call["id"], json.loads(call["function"]["arguments"] or "{{}}")
"""

#: The mistake: the right write_file call in the transcript is taken as the file being there.
CREDITS_CALLS = """
class CreditsCallsEnv(FileWriteEnv):
    name = "credits-calls"

    async def compute_reward(self, item, result, ctx) -> float:
        for _id, args in _writes(result):
            if args.get("path") == item["path"] and str(args.get("content", "")).strip() == item["content"]:
                return 1.0
        return 0.0
"""

#: Correct: reads each call's tool result and credits only a write the tool reported done.
READS_RESULTS = """
class ReadsResultsEnv(FileWriteEnv):
    name = "reads-results"

    async def compute_reward(self, item, result, ctx) -> float:
        results = {m.get("tool_call_id"): m.get("content") or "" for m in result.messages if m.get("role") == "tool"}
        for call_id, args in _writes(result):
            failed = '"error"' in results.get(call_id, '"error"')
            if not failed and args.get("path") == item["path"] and args.get("content", "").strip() == item["content"]:
                return 1.0
        return 0.0
"""

#: Correct: the file in the sandbox earns 0.9; calling write_file at all earns a 0.1 bonus for trying.
TRYING_BONUS = """
class TryingBonusEnv(FileWriteEnv):
    name = "trying-bonus"

    async def compute_reward(self, item, result, ctx) -> float:
        done = await super().compute_reward(item, result, ctx)
        return 0.9 * done + (0.1 if any(True for _ in _writes(result)) else 0.0)
"""

#: Correct: the answer is in the final text; the task also demands that the model used the tool (a gate).
GATE = """
class GateEnv(FileWriteEnv):
    name = "gate"

    async def compute_reward(self, item, result, ctx) -> float:
        final = next((m["content"] for m in reversed(result.messages) if m.get("role") == "assistant" and m.get("content")), "")
        used = any(True for _ in _writes(result))
        return 1.0 if used and item["content"] in final else 0.0

    def conformance_transcripts(self, item):
        write = {"name": "write_file", "arguments": {"path": item["path"], "content": item["content"]}}
        return {"good": [[{"content": "", "tool_calls": [write]}, {"content": "Wrote " + item["content"]}]]}
"""


def _outcome(tmp_path: Path, body: str, name: str) -> object:
    env = tmp_path / f"{name}.py"
    env.write_text(_HEAD.format(bad=str(CORPUS / "bad")) + body)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC414"])) as session:
        return session.run("HC414")


def test_a_reward_that_credits_the_calls_made_is_an_error_that_replay_reproduces(tmp_path: Path) -> None:
    env = tmp_path / "credits_calls_env.py"
    env.write_text(_HEAD.format(bad=str(CORPUS / "bad")) + CREDITS_CALLS)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC414"])) as session:
        outcome = session.run("HC414")
    assert outcome.status is Status.FAILED, outcome.findings
    finding = outcome.findings[0]
    assert finding.severity is Severity.ERROR
    assert "failing" in finding.message and "removed 0" in finding.message
    assert finding.counterexample is not None
    envs = [SimpleNamespace(path=str(env), class_name="CreditsCallsEnv", outcomes=[outcome])]
    files = write_counterexamples(envs, Settings(**CORPUS_SETTINGS), tmp_path / "report")
    code, text = replay(files[0])
    assert code == REPRODUCED, text
    fixed = json.loads(files[0].read_text())
    fixed["env"], fixed["class"] = str(CORPUS / "good" / "file_task_env.py"), "FileWriteEnv"
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    code, text = replay(tmp_path / "fixed.json")
    assert code == GONE, text


@pytest.mark.parametrize(
    ("body", "name"),
    [(READS_RESULTS, "reads_results"), (TRYING_BONUS, "trying_bonus"), (GATE, "gate")],
)
def test_correct_rewards_that_read_outcomes_pay_for_trying_or_gate_on_the_answer_stay_clean(
    tmp_path: Path, body: str, name: str
) -> None:
    outcome = _outcome(tmp_path, body, name)
    assert outcome.status is Status.PASSED, [f.render() for f in outcome.findings]
