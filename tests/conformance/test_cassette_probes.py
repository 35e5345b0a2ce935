"""Recorded cassettes drive extra conformance probes: a real model's replies go through the same reward checks."""

from __future__ import annotations

import shutil
from pathlib import Path

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._observations.rollouts import ProbeTranscripts, cassette_probes

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = (
    ROOT / "tests" / "examples" / "cassettes" / "test_recorded_rewards" / "test_rewards[arithmetic-good].yaml"
)
EXAMPLE = (ROOT / "environments" / "arithmetic_env.py").read_text()


def _env_with_cassette(tmp_path: Path, source: str) -> Path:
    env = tmp_path / "arith_env.py"
    env.write_text(source)
    folder = tmp_path / "cassettes" / "arith_env"  # where `hermes-envs record` writes for this env
    folder.mkdir(parents=True)
    shutil.copy(CASSETTE, folder / "good.yaml")
    return env


def test_a_cassette_next_to_the_env_becomes_a_probe(tmp_path: Path) -> None:
    env = _env_with_cassette(tmp_path, EXAMPLE)
    with EnvSession(env, settings=Settings(probe_items=1)) as session:
        runs = session.observe(ProbeTranscripts).runs
        probes = [p for p in runs if p.probe == "cassette:good.yaml"]
        assert len(probes) == 1
        messages = probes[0].result.messages
        # the recorded real-model turns were replayed through the real loop: a tool call, then the answer
        assert any(m.get("tool_calls") for m in messages)
        assert "The terminal says" in messages[-1]["content"]
        assert session.run("HC402").status is Status.PASSED


def test_a_reward_that_breaks_on_the_real_reply_is_reported(tmp_path: Path) -> None:
    source = EXAMPLE.replace(
        "        text = self._final_answer(result)",
        "        text = self._final_answer(result)\n"
        "        if text.startswith('The terminal says'):\n"
        "            raise ValueError('unexpected preamble')",
    )
    env = _env_with_cassette(tmp_path, source)
    with EnvSession(env, settings=Settings(probe_items=1, select=["HC402"])) as session:
        outcome = session.run("HC402")
    assert outcome.status is Status.FAILED
    (finding,) = outcome.findings
    assert "cassette:good.yaml" in finding.message and "replay of good.yaml" in finding.message
    assert "ValueError: unexpected preamble" in finding.message


def test_no_cassette_no_extra_probe(tmp_path: Path) -> None:
    env = tmp_path / "arith_env.py"
    env.write_text(EXAMPLE)
    with EnvSession(env, settings=Settings(probe_items=1)) as session:
        assert cassette_probes(session) == ([], [])
