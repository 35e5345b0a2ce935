"""What the default catalogue costs in env calls (issue 29's budget: `hermes-envs check` within 1.5x of its time
before the oracles): runs counted, never timed, so the tests hold on a loaded machine."""

from __future__ import annotations

from pathlib import Path

from hermes_envs.conformance import EnvSession, Settings, Status

from .corpus import CORPUS, CORPUS_SETTINGS

_COUNTING_ENV = '''
import sys
sys.path.insert(0, {bad!r})
from _good import LetterCountEnv


class CountingEnv(LetterCountEnv):
    """Correct; counts its evaluate() runs."""

    name = "counting"
    evaluate_runs = 0

    async def evaluate(self, *args, **kwargs):
        type(self).evaluate_runs += 1
        return await super().evaluate(*args, **kwargs)
'''


def _evaluate_runs(tmp_path: Path, *, thorough: bool) -> int:
    env = tmp_path / "counting_env.py"
    env.write_text(_COUNTING_ENV.format(bad=str(CORPUS / "bad")))
    settings = Settings(**CORPUS_SETTINGS, select=["HC202", "HC705", "HC707"], thorough=thorough)
    with EnvSession(env, settings=settings) as session:
        for check_id in ("HC202", "HC705", "HC707"):
            assert session.run(check_id).status is Status.PASSED, session.run(check_id).findings
        return int(session.load().evaluate_runs)


def test_hc705_and_hc707_share_the_second_evaluate_run(tmp_path: Path) -> None:
    """HC202's observation runs evaluate() once; HC705 (train metrics around a run) and HC707 (it works again)
    judge one second run together: two runs in all, not three."""
    assert _evaluate_runs(tmp_path, thorough=False) == 2


def test_thorough_hc707_also_runs_evaluate_with_the_tools_called(tmp_path: Path) -> None:
    """--thorough keeps HC707's own run, the fake model calling every tool first."""
    assert _evaluate_runs(tmp_path, thorough=True) == 3
