"""Observations are typed, read-only and made once per session: however many checks read one, and in whatever
order the checks run, the env is observed once and the findings are the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from hermes_envs.conformance import EnvSession, Settings, all_checks
from hermes_envs.conformance._findings import Outcome
from hermes_envs.conformance._observations import (
    EvalObservation,
    ScoredProbes,
    TrainingScan,
    WandbObservation,
)

from . import corpus

ARITHMETIC = corpus.ROOT / "environments" / "arithmetic_env.py"
#: Findings that measure wall time (setup seconds, event-loop stalls) vary with the machine's load, not the order.
TIMED = {"HC205", "HC408"}


def _counting(monkeypatch: pytest.MonkeyPatch, kind: type) -> list[int]:
    """Count the builds of observation ``kind`` (the real build still runs)."""
    builds: list[int] = []
    original = kind.__dict__["build"].__func__

    def build(cls: type, session: EnvSession) -> Any:
        builds.append(1)
        return original(cls, session)

    monkeypatch.setattr(kind, "build", classmethod(build))
    return builds


@pytest.mark.slow
def test_an_observation_is_built_once_however_many_checks_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    training = _counting(monkeypatch, TrainingScan)
    scored = _counting(monkeypatch, ScoredProbes)
    with EnvSession(ARITHMETIC, settings=Settings(**corpus.CORPUS_SETTINGS)) as session:
        # HC202, HC203, HC204, HC301 all read the training scan; HC401, HC402, HC405, HC409 the scored probes.
        for check_id in ("HC202", "HC203", "HC204", "HC301", "HC401", "HC402", "HC405", "HC409"):
            session.run(check_id)
        assert session.observe(TrainingScan) is session.observe(TrainingScan)
        assert session.observe(ScoredProbes) is session.observe(ScoredProbes)
    assert len(training) == 1
    assert len(scored) == 1


def test_a_failed_observation_is_attempted_once_and_raised_to_every_reader(tmp_path: Path) -> None:
    env = tmp_path / "broken_setup_env.py"
    env.write_text(
        (corpus.ROOT / "environments" / "arithmetic_env.py")
        .read_text()
        .replace(
            "    async def setup(self) -> None:\n",
            "    async def setup(self) -> None:\n        _SETUPS.append(1)\n        raise RuntimeError('no data')\n",
            1,
        )
        + "\n_SETUPS: list = []\n"
    )
    with EnvSession(env) as session:
        for _ in range(3):
            with pytest.raises(RuntimeError, match="no data"):
                session.observe(TrainingScan)
        assert session.module._SETUPS == [1]


@pytest.mark.slow
def test_a_check_cannot_change_an_observation() -> None:
    with EnvSession(ARITHMETIC, settings=Settings(**corpus.CORPUS_SETTINGS)) as session:
        scan = session.observe(TrainingScan)
        with pytest.raises(dataclasses.FrozenInstanceError):
            scan.items = ()  # type: ignore[misc]
        assert isinstance(scan.items, tuple)  # no append / pop on what other checks read
        evaluation = session.observe(EvalObservation)
        with pytest.raises(dataclasses.FrozenInstanceError):
            evaluation.error = "changed"  # type: ignore[misc]
        assert isinstance(evaluation.requests, tuple)
        wandb = session.observe(WandbObservation)
        with pytest.raises(TypeError):
            wandb.bare["wandb_log()"] = "changed"  # type: ignore[index]
        rollout = session.observe(ScoredProbes).rollouts[0]
        with pytest.raises(dataclasses.FrozenInstanceError):
            rollout.score = 1.0  # type: ignore[misc]
        assert session.observe(ScoredProbes).rollouts[0].score == rollout.score


def _findings(outcomes: list[Outcome] | tuple[Outcome, ...]) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {
        o.check_id: (o.status.value, tuple(sorted(corpus.normalized(f.message) for f in o.findings)))
        for o in outcomes
        if o.check_id not in TIMED
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [
        ARITHMETIC,
        corpus.CORPUS / "bad" / "eval_in_train_metrics.py",
        corpus.CORPUS / "bad" / "case_sensitive_answer.py",
    ],
    ids=lambda p: p.name,
)
def test_check_order_does_not_change_the_findings(path: Path) -> None:
    in_order = corpus.outcomes(path)
    settings = Settings(**corpus.CORPUS_SETTINGS, slow=path.name in corpus.SLOW)
    with EnvSession(path, settings=settings) as session:
        ids = [c.id for c in all_checks()]
        for check_id in reversed(ids):
            session.run(check_id)
        reversed_order = [session.outcomes[i] for i in ids]
    assert _findings(reversed_order) == _findings(in_order)
