"""General oracles with calibrated severity (issue 29): an error needs a replayable counterexample to a rule every
correct env obeys; what rests on the kit's guess (the gold, a fake judge's verdict, one wall-clock stall) is a
warning. Each false alarm the issue names has a test here that failed before the fix."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._findings import Severity
from hermes_envs.conformance._replay import GONE, REPRODUCED, replay, write_counterexamples
from hermes_envs.conformance._watchdog import LoopWatchdog, Stall
from hermes_envs.conformance.checks.reward_runtime import _stall_findings

from .corpus import BAD, CORPUS_SETTINGS, GOOD, outcomes

BY_NAME = {p.name: p for p in BAD + GOOD}
ROOT = Path(__file__).resolve().parents[2]


def _status(path: Path) -> dict[str, object]:
    return {o.check_id: o for o in outcomes(path)}


# ------------------------------------------------------------------------------------------------ false alarms
@pytest.mark.parametrize("name", ["report_file_env.py", "script_hidden_tests_env.py"])
def test_a_task_whose_answer_is_a_file_or_a_saved_script_gets_no_hc407_error(name: str) -> None:
    """Before: "every probe scored 0" on these correct envs was an HC407 error. Now the kit writes the item's answer
    to the file the prompt names (answer.txt, solution.py) and proves the reward with it."""
    outcome = _status(BY_NAME[name])["HC407"]
    assert outcome.status is Status.PASSED, outcome


def test_a_file_answer_the_kit_cannot_place_is_a_warning(tmp_path: Path) -> None:
    """The same task with the file named in words the kit cannot read as a path: every gold probe scores 0, which
    says the kit's guess of the answer's form was wrong, not that the reward is: a warning, never an error."""
    source = BY_NAME["report_file_env.py"].read_text()
    unnamed = source.replace(
        '"answer.txt in your working directory."', '"answer dot txt in your working directory."'
    )
    assert unnamed != source
    env = tmp_path / "unnamed_report_env.py"
    env.write_text(unnamed)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS, select=["HC407"])) as session:
        outcome = session.run("HC407")
    assert outcome.status is Status.WARNED, outcome
    assert all(f.severity is Severity.WARNING for f in outcome.findings)
    assert "kit's guess" in outcome.findings[0].message


def test_the_envs_own_good_transcript_failing_is_still_an_error() -> None:
    """The env contradicting itself (its own good transcript scores no higher than a control) stays an error."""
    found = [p for p in BAD if "HC407" in _status(p) and _status(p)["HC407"].status is Status.FAILED]
    for path in found:
        assert any("transcript" in f.subject for f in _status(path)["HC407"].findings), path.name


def test_max_token_length_is_no_send_filter() -> None:
    """atroposlib skips over-long groups by the trainer's max_token_len (run-api /info), not by the env's
    max_token_length. Before: HC504 failed a correct env whose max_token_length was shorter than its rollouts."""
    settings = Settings(**CORPUS_SETTINGS, env={"max_token_length": 16})
    with EnvSession(ROOT / "conformance/good/exact_answer_env.py", settings=settings) as s:
        outcome = s.run("HC504")
    assert outcome.status is Status.PASSED, outcome


JUDGE_ENV = '''
import re
from atroposlib.envs.server_handling.server_manager import APIServerConfig
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from hermes_envs import final_response

ROWS = [{"question": f"Explain topic number {w}.", "reference": w} for w in
        ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]]


class OpenJudgeEnv(HermesAgentBaseEnv):
    """A judge scores open answers 0-10; with no verdict, a length heuristic (as upstream's ouroboros does)."""
    name = "open-judge"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls):
        config = HermesAgentEnvConfig(enabled_toolsets=[], max_agent_turns=2, group_size=2,
                                      tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B")
        return config, [APIServerConfig(base_url="http://localhost:9001/v1", model_name="m", api_key="x",
                                        server_type="openai", health_check=False)]

    async def setup(self):
        self.test, self.train, self.pos = ROWS[:2], ROWS[2:], 0

    async def get_next_item(self):
        self.pos += 1
        return self.train[(self.pos - 1) % len(self.train)]

    def format_prompt(self, item):
        return item["question"]

    async def compute_reward(self, item, result, ctx):
        text = final_response(result) or ""
        if not text.strip():
            return 0.0
        reply = await self.server.chat_completion(
            messages=[{"role": "user", "content": f"Rate 0-10: {text}. Reply 'SCORE: n'."}], n=1, temperature=0.0)
        found = re.search(r"SCORE:\\s*(\\d+)", reply.choices[0].message.content or "")
        if found:
            return min(10, int(found.group(1))) / 10
        return min(1.0, len(text) / 40)

    async def evaluate(self, *args, **kwargs):
        await self.evaluate_items(self.test, "eval/score")
'''


@pytest.mark.slow
def test_a_judge_reward_scored_through_the_kits_fake_judge_gets_no_reward_errors(tmp_path: Path) -> None:
    """The kit's fake model is the judge here, so what it scores is the env's fallback for a judge without a verdict:
    evidence about the fake, not the env. Before: HC406 (and the reward checks built on the guessed gold) errored."""
    env = tmp_path / "open_judge_env.py"
    env.write_text(JUDGE_ENV)
    with EnvSession(env, settings=Settings(**CORPUS_SETTINGS)) as s:
        found = {o.check_id: o for o in s.run_all()}
    reward = {k: o for k, o in found.items() if k.startswith("HC4") and o.status is Status.FAILED}
    assert not reward, "\n".join(f.render() for o in reward.values() for f in o.findings)
    assert found["HC406"].status is Status.WARNED  # the refusal earns length credit: said, as a warning


# ------------------------------------------------------------------------------------------------ HC408
def _session(stalls: list[Stall], threshold: float = 0.3) -> SimpleNamespace:
    return SimpleNamespace(
        settings=Settings(blocking_seconds=threshold), watchdog=SimpleNamespace(stalls=stalls)
    )


def test_one_wall_clock_stall_mostly_off_cpu_is_a_warning() -> None:
    """Before: a single 0.78 s stall read from the wall clock (a loaded machine) failed an unchanged env."""
    stall = Stall(
        "rewards", 0.78, "compute_reward (env.py:40)", "compute_reward (env.py:40)", cpu_seconds=0.02
    )
    (finding,) = _stall_findings(_session([stall]), {})
    assert finding.severity is Severity.WARNING and "seen once" in finding.message


def test_a_stall_verified_by_cpu_time_or_a_repeat_is_an_error() -> None:
    cpu = Stall("rewards", 0.8, "score (env.py:9)", "score (env.py:9)", cpu_seconds=0.75)
    assert _stall_findings(_session([cpu]), {})[0].severity is Severity.ERROR
    repeat = [Stall("rewards", 0.6, "score (env.py:9)", "sleep", cpu_seconds=0.0) for _ in range(2)]
    assert _stall_findings(_session(repeat), {})[0].severity is Severity.ERROR


def test_one_blocking_line_gives_one_finding_across_hooks() -> None:
    """Before: one blocking call stalled setup's neighbours, compute_reward and evaluate: three findings."""
    where = "helper (env.py:12)"
    stalls = [Stall(phase, 0.6, where, "sleep", cpu_seconds=0.0) for phase in ("rewards", "gold", "evaluate")]
    (finding,) = _stall_findings(_session(stalls), {})
    assert finding.severity is Severity.ERROR
    assert (
        "compute_reward" in finding.message
        and "evaluate" in finding.message
        and "stalled again" in finding.message
    )


def test_the_kits_own_sandbox_cleanup_is_not_blamed_on_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ToolContext call made by the kit's helpers (``with ToolContext(...)``, the base's score_rollout) is the
    kit's doing; before, its stall was blamed on the env's hook that called the helper (#27 item 14)."""
    from hermes_envs.tools.context import ToolContext

    monkeypatch.setattr(ToolContext, "cleanup", lambda self: time.sleep(0.4))

    async def through_the_kit() -> None:
        ctx = ToolContext("oracle-test-kit")
        ctx.__exit__(None, None, None)  # the kit's code (hermes_envs) calls cleanup

    async def by_the_env() -> None:
        ToolContext("oracle-test-env").cleanup()  # the env's own code calls it

    kit = LoopWatchdog(threshold=0.25)
    asyncio.run(kit.watch("evaluate", through_the_kit()))
    assert kit.stalls == []
    env = LoopWatchdog(threshold=0.25)
    asyncio.run(env.watch("evaluate", by_the_env()))
    assert [s.sync_tool_calls for s in env.stalls] == [("cleanup",)]


# ------------------------------------------------------------------------------------------------ HC413 + replay
def test_metamorphic_relations_catch_a_reward_reading_the_models_thoughts() -> None:
    outcome = _status(BY_NAME["reward_reads_reasoning.py"])["HC413"]
    subjects = {f.subject for f in outcome.findings if f.severity is Severity.ERROR}
    assert subjects == {
        "relation: thoughts lower a correct answer",
        "relation: thoughts credit a wrong answer",
    }
    assert all(f.counterexample for f in outcome.findings if f.severity is Severity.ERROR)


def test_metamorphic_relations_catch_a_score_that_depends_on_what_came_before() -> None:
    outcome = _status(BY_NAME["reward_running_max.py"])["HC413"]
    assert outcome.status is Status.FAILED
    assert outcome.findings[0].subject == "relation: order of scoring"


@pytest.mark.slow
def test_replay_reruns_an_error_and_says_when_it_no_longer_reproduces(tmp_path: Path) -> None:
    bad = BY_NAME["reward_reads_reasoning.py"]
    envs = [SimpleNamespace(path=str(bad), class_name="ReasoningReadEnv", outcomes=list(outcomes(bad)))]
    files = write_counterexamples(envs, Settings(**CORPUS_SETTINGS), tmp_path)
    case_files = [f for f in files if json.loads(f.read_text())["counterexample"]]
    assert case_files, files
    code, text = replay(case_files[0])
    assert code == REPRODUCED and "reproduces" in text, text
    fixed = json.loads(case_files[0].read_text())
    fixed["env"], fixed["class"] = str(ROOT / "conformance/good/exact_answer_env.py"), "LetterCountEnv"
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    code, text = replay(tmp_path / "fixed.json")
    assert code == GONE and "no longer reproduces" in text, text


def test_every_error_of_the_reward_relations_carries_a_counterexample() -> None:
    for path in BAD:
        for outcome in outcomes(path):
            if outcome.check_id not in ("HC406", "HC410", "HC412", "HC413"):
                continue
            for finding in outcome.findings:
                if finding.severity is Severity.ERROR:
                    assert finding.counterexample, (path.name, finding.render())


def test_replay_of_a_file_that_is_no_counterexample_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hermes_envs.cli import main

    bad = tmp_path / "not-a-case.json"
    bad.write_text("{}")
    assert main(["replay", str(bad)]) == 4
    assert "should be a counterexample file" in capsys.readouterr().err


@pytest.mark.slow
def test_check_with_a_report_writes_counterexamples_that_replay_reproduces(tmp_path: Path) -> None:
    """The command an author runs: check --report writes each error next to the report; replay exits 1 on it."""
    from hermes_envs.cli import main

    bad = BY_NAME["reward_reads_reasoning.py"]
    code = main(
        [
            "check",
            str(bad),
            "--select",
            "HC4",
            "--set",
            "blocking_seconds=0.3",
            "--report",
            str(tmp_path / "r.json"),
        ]
    )
    assert code == 1
    files = sorted(tmp_path.glob("reward_reads_reasoning-ReasoningReadEnv-HC413-*.json"))
    assert files and json.loads(files[0].read_text())["counterexample"]["holds"]
    assert main(["replay", str(files[0])]) == REPRODUCED
