"""Backend rules the kit derives from the backend classes instead of restating them (issue: HC604 errored on a
``vercel_sandbox`` env, whose tasks each have a root of their own, because the kit kept its own list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status
from hermes_envs.conformance._ctxpaths import task_has_own_root
from hermes_envs.tools.backends import available_backends, backends

BAD = Path(__file__).resolve().parents[2] / "conformance" / "bad"


@pytest.mark.parametrize("name", available_backends())
def test_the_kit_agrees_with_every_backend_on_private_roots(name: str) -> None:
    assert task_has_own_root(name) is bool(backends.get(name).container_paths)


def test_an_unknown_backend_name_has_no_private_root() -> None:
    assert not task_has_own_root("no-such-backend")


_ENV = """
import sys
sys.path.insert(0, {bad!r})
import shared_tmp_answer


class StandInNotesEnv(shared_tmp_answer.NotesEnv):
    @classmethod
    def config_init(cls):
        env, servers = super().config_init()
        env.terminal_backend = {backend!r}
        return env, servers
"""


@pytest.mark.parametrize(
    ("backend", "status"), [("vercel_sandbox", Status.NOT_APPLICABLE), ("local", Status.FAILED)]
)
def test_hc604_follows_the_backend(tmp_path: Path, backend: str, status: Status) -> None:
    env = tmp_path / "stand_in_env.py"
    env.write_text(_ENV.format(bad=str(BAD), backend=backend))
    with EnvSession(env, settings=Settings(select=["HC604"])) as session:
        outcome = next(o for o in session.run_all() if o.check_id == "HC604")
    assert outcome.status is status, outcome
