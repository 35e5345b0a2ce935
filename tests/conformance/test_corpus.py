"""The kit's own proof: every check trips its known-bad env(s) and nothing fires on a good env.

The corpus runs in this process through EnvSession (each env once; see corpus.py). A bad env must trip exactly
the ids it declares in EXPECTED_FINDINGS: a missing id is a check that misses its bug, an extra one a false alarm
on an env that is otherwise correct.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from hermes_envs.conformance import EnvSession, Settings, Status, all_checks

from .corpus import BAD, GOOD, expected_findings, expected_warnings, fired, outcomes


def _render(path: Path) -> str:
    return "\n".join(f.render() for o in fired(path).values() for f in o.findings) or "(nothing)"


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.stem)
def test_no_check_fires_on_a_good_env(path: Path) -> None:
    """No error ever; a warning only where the env declares it (EXPECTED_WARNINGS: a shape the kit can only guess
    at, e.g. an answer that is a file), and then exactly those."""
    found = fired(path)
    errors = {k for k, o in found.items() if o.status is Status.FAILED}
    assert not errors, f"{path.name} is correct, yet:\n{_render(path)}"
    assert set(found) == expected_warnings(path), f"{path.name} is correct, yet:\n{_render(path)}"


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_a_bad_env_trips_exactly_its_declared_checks(path: Path) -> None:
    expected = expected_findings(path)
    got = set(fired(path))
    assert got == expected, (
        f"{path.name}: missed {sorted(expected - got)}, unexpected {sorted(got - expected)}\n{_render(path)}"
    )


#: Checks whose hostile envs live in test files instead of conformance/bad: HC903 is judged only when the env runs
#: contained (the in-process corpus run here cannot trip it); HC904's mutants are blind3's raw code executor made
#: to run code in the trainer's folder or with its secrets, run from test_model_code.py.
CONTAINED_ONLY = {"HC903": "test_containment.py", "HC904": "test_model_code.py"}


def test_every_check_has_a_bad_env() -> None:
    covered = set().union(*(expected_findings(p) for p in BAD))
    for check_id, test_file in CONTAINED_ONLY.items():
        assert check_id in (Path(__file__).parent / test_file).read_text(), (
            f"{test_file} should trip {check_id}"
        )
        covered.add(check_id)
    missing = [c.id for c in all_checks() if c.id not in covered]
    assert not missing, f"checks without a known-bad env in conformance/bad: {missing}"


def test_every_style_of_good_env_is_covered() -> None:
    names = {p.name for p in GOOD}
    assert {
        "exact_answer_env.py",
        "file_task_env.py",
        "judge_env.py",
        "raw_atropos_env.py",
        "upstream_style_env.py",
    } <= names


def test_agent_checks_are_not_applicable_on_a_raw_atroposlib_env() -> None:
    raw = next(p for p in GOOD if p.name == "raw_atropos_env.py")
    status = {o.check_id: o.status for o in outcomes(raw)}
    assert status["HC401"] is Status.NOT_APPLICABLE and status["HC701"] is Status.NOT_APPLICABLE
    assert status["HC501"] is Status.PASSED and status["HC702"] is Status.PASSED


@pytest.mark.slow
def test_the_slow_process_check_passes_on_a_good_env() -> None:
    good = next(p for p in GOOD if p.name == "exact_answer_env.py")
    with EnvSession(good, settings=Settings(slow=True)) as session:
        assert session.run("HC503").status is Status.PASSED


def test_rollout_checks_skip_naming_hc301_when_format_prompt_returns_no_str() -> None:
    bad = next(p for p in BAD if p.name == "prompt_returns_coroutine.py")
    status = {o.check_id: o for o in outcomes(bad)}
    for check_id in ("HC401", "HC402", "HC403", "HC408", "HC501"):
        assert status[check_id].status is Status.SKIPPED, check_id
        assert "returned a coroutine, not a str" in status[check_id].note
        assert "HC301" in status[check_id].note


def test_a_session_in_this_process_never_changes_its_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cwd belongs to the whole process (its threads, the other tests of a pytest run): an uncontained session
    leaves it alone, even while evaluate() runs, so the env's relative write lands where the process runs."""
    bad = next(p for p in BAD if p.name == "eval_writes_own_file.py")
    monkeypatch.chdir(tmp_path)
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.add(os.getcwd())
            done.wait(0.0005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with EnvSession(bad, settings=Settings(select=["HC703", "HC705"])) as session:
            assert session.run("HC703").status is Status.FAILED
            session.run("HC705")
    finally:
        done.set()
        watcher.join()
    assert seen == {str(tmp_path)}
    assert (tmp_path / "eval_results.jsonl").exists()


def test_a_contained_run_keeps_the_envs_relative_writes_out_of_the_users_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contained worker runs evaluate() in a scratch cwd: the env's own results file reaches neither the
    folder the check runs from nor HC903's list of writes into it."""
    from hermes_envs.conformance._runner import run_conformance

    bad = next(p for p in BAD if p.name == "eval_writes_own_file.py")
    monkeypatch.chdir(tmp_path)
    report = run_conformance([str(bad)], Settings(select=["HC703", "HC903"]))
    by_id = {o.check_id: o for o in report.envs[0].outcomes}
    assert by_id["HC703"].status is Status.FAILED
    assert not [f for f in by_id["HC903"].findings if "eval_results" in f.message]
    assert list(tmp_path.iterdir()) == []


def test_the_scratch_working_directory_still_shows_the_users_files(tmp_path: Path, monkeypatch) -> None:
    """An evaluate() reading eval data relative to the cwd must not break under the check (the contained worker's
    scratch cwd, made here in this process as the worker makes it)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "eval.jsonl").write_text('{"q": 1}\n')
    (tmp_path / "notes.txt").write_text("hi")
    monkeypatch.chdir(tmp_path)
    good = next(p for p in GOOD if p.name == "exact_answer_env.py")
    session = EnvSession(good, settings=Settings(select=["HC703"]), own_process=True)
    with session, session.scratch_cwd() as scratch:
        assert Path("data/eval.jsonl").read_text() == '{"q": 1}\n' and Path("notes.txt").read_text() == "hi"
        Path("eval_results.jsonl").write_text("x")
        assert Path.cwd() == scratch
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "notes.txt"]


def test_blocking_inside_the_sync_tool_context_is_a_warning_and_other_blocking_an_error() -> None:
    by_name = {p.name: p for p in BAD}
    sync_ctx = fired(by_name["reward_sync_tool_context.py"])["HC408"]
    assert sync_ctx.status is Status.WARNED
    assert "`await ctx.aterminal(...)`" in sync_ctx.findings[0].fix
    # A one-time stall (a lazy first-use build) seen once and off-CPU is still an error when the line called a
    # thread-blocking function (time.sleep here): the call itself verifies it (a bare wall-clock stall seen once
    # warns: test_oracles).
    once = fired(by_name["reward_blocks_loop.py"])["HC408"]
    assert once.status is Status.FAILED and "in time.sleep(0.7) called there" in once.findings[0].message
    sleeping = fired(by_name["reward_sync_http_judge.py"])["HC408"]
    assert sleeping.status is Status.FAILED
