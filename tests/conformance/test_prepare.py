"""A check's ``prepare`` hook starts its background work once the env has loaded, before the later checks run
(HC404 starts its other-seed interpreters that way); the hook never runs for a check the run skips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_envs.conformance import CHECK_REGISTRY, CHECKS, EnvSession, Settings, check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "environments" / "arithmetic_env.py"
SET_ORDER = ROOT / "conformance" / "bad" / "set_order_list.py"


def test_prepare_runs_once_the_env_loaded_and_before_the_checks_after_it() -> None:
    events: list[Any] = []

    def prepare(s: EnvSession) -> None:
        events.append(("prepare", s.env_cls is not None))

    def prepare_thorough(s: EnvSession) -> None:
        events.append("thorough prepare")

    def scratch(s: EnvSession) -> list[Any]:
        events.append("check")
        return []

    with CHECK_REGISTRY.isolated():
        check("HC998", "scratch", "a scratch check", why="a reason.", fix="a fix.", prepare=prepare)(scratch)
        check(
            "HC999",
            "costly",
            "a costly scratch",
            why="a reason.",
            fix="a fix.",
            thorough=True,
            prepare=prepare_thorough,
        )(scratch)
        with EnvSession(EXAMPLE, settings=Settings(contain=False, select=["HC101", "HC998", "HC999"])) as s:
            outcomes = s.run_all()
    assert [o.check_id for o in outcomes] == ["HC101", "HC998", "HC999"]
    assert events == [("prepare", True), "check"]  # the --thorough oracle is skipped, and so is its hook
    assert "HC998" not in CHECKS


def test_hc404_has_a_prepare_hook() -> None:
    assert CHECKS["HC404"].prepare is not None


@pytest.mark.slow
def test_the_hash_seed_workers_wait_for_their_cases_and_stop_when_never_sent_any(tmp_path: Path) -> None:
    from hermes_envs.conformance import _hashseed as hashseed

    case = {
        "item": {"question": "List the vowels in order.", "items": ["a", "e", "i", "o", "u"]},
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": '["a","e","i","o","u"]'},
        ],
    }
    workers = hashseed.Workers(SET_ORDER, "ListEnv", tmp_path / "sent")
    workers.send([case, case])
    scores = workers.collect()
    assert sorted(scores) == list(hashseed.SEEDS) and all(len(v) == 2 for v in scores.values())
    idle = hashseed.Workers(SET_ORDER, "ListEnv", tmp_path / "idle")
    idle.close(timeout=120)
    assert not list((tmp_path / "idle").glob("scores-*.json"))


def test_the_contained_worker_runs_the_prepare_hooks_as_run_all_does() -> None:
    # The contained worker (hermes-envs check) runs the checks one by one, not through run_all: it started HC404's
    # other-seed interpreters only when HC404 itself ran, then waited for their import (~5 s of CPU each).
    import dataclasses

    from hermes_envs.conformance._container import run_contained

    def prepare(s: EnvSession) -> None:
        print("prepare", s.env_cls is not None)

    def scratch(s: EnvSession) -> list[Any]:
        print("check")
        return []

    settings = Settings(select=["HC101", "HC998"], namespaces=False)
    with CHECK_REGISTRY.isolated():
        check("HC998", "scratch", "a scratch check", why="a reason.", fix="a fix.", prepare=prepare)(scratch)
        result = run_contained(  # a fork: the scratch check is registered in the worker too
            "hermes_envs.conformance._contained:make_worker",
            [str(EXAMPLE), None, dataclasses.asdict(settings), False],
            start="fork",
            namespaces=False,
        )
    printed = "".join(e.get("text", "") for e in result.events if e.get("ev") == "output").split()
    assert [w for w in printed if w in ("prepare", "True", "check")] == ["prepare", "True", "check"]
    outcomes = [e["record"]["check_id"] for e in result.events if e.get("ev") == "outcome"]
    assert outcomes == ["HC101", "HC998"]
