"""Shared by the corpus tests: run every corpus env once (in this process) and keep the outcomes."""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
import tempfile
from pathlib import Path

from hermes_envs.conformance import EnvSession, Outcome, Settings, Status
from hermes_envs.conformance._session import mirror_cwd
from hermes_envs.tools import registry

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance"
GOOD = sorted(p for p in (CORPUS / "good").glob("*.py") if not p.name.startswith("_")) + [
    ROOT / "environments" / "arithmetic_env.py"
]
BAD = sorted(p for p in (CORPUS / "bad").glob("*.py") if not p.name.startswith("_"))

#: Thresholds tight enough that the timing mistakes of the corpus (a 3.5 s setup, a 0.7 s stall) show up, and loose
#: enough that a correct env on a loaded 2-core CI machine (setup of a second or two) never trips them.
CORPUS_SETTINGS = {"setup_seconds": 2.5, "blocking_seconds": 0.3}
#: HC503 (a `process` run in a subprocess, a few seconds) runs only on these.
SLOW = {"main_calls_other_class.py"}
#: The --thorough oracles (HC206: a fresh interpreter; HC708, HC711: more evaluate() runs) run only on these.
THOROUGH = {"split_unseeded_shuffle.py", "eval_errors_scored_zero.py", "eval_rotating_window.py"}


def expected_findings(path: Path) -> set[str]:
    """The module-level ``EXPECTED_FINDINGS`` of a bad env, read without importing it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "EXPECTED_FINDINGS" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{path.name} should declare EXPECTED_FINDINGS = [...]")


def expected_warnings(path: Path) -> set[str]:
    """The module-level ``EXPECTED_WARNINGS`` of a good env (ids that may warn, never fail), read without importing
    it: a correct env of a shape the kit cannot fully judge (an answer that is a file) may get a warning that says
    so; an error on it is always a false alarm."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "EXPECTED_WARNINGS" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


#: The environment variable tests/conftest.py sets (fixture ``shared_corpus_cache``) to a folder every xdist worker
#: of the session shares: each env then runs once per session, not once per worker that happens to get one of its
#: tests (test_corpus, test_messages, test_detection ...). A variable, not a module attribute: pytest may import
#: this file under two module names (``conformance.corpus`` here, ``tests.conformance.corpus`` from elsewhere).
SHARED_CACHE_VARIABLE = "HERMES_TESTS_CORPUS_CACHE"


def _run(path: Path) -> tuple[Outcome, ...]:
    """Run every check on ``path`` in this process, from a scratch cwd mirroring this one: the uncontained kit
    leaves the cwd alone, so the corpus's relative writes (an eval_results.jsonl) would land in the checkout."""
    settings = Settings(**CORPUS_SETTINGS, slow=path.name in SLOW, thorough=path.name in THOROUGH)
    # The env's own tools are taken off the registry afterwards: another env of this worker would list them among
    # the available toolsets (a finding's text) or register a same-named tool of its own (ToolRegistryError).
    with tempfile.TemporaryDirectory(prefix="corpus-cwd-") as scratch, registry.isolated():
        with contextlib.chdir(mirror_cwd(Path(scratch))), EnvSession(path, settings=settings) as session:
            return tuple(session.run_all())


@functools.cache
def outcomes(path: Path) -> tuple[Outcome, ...]:
    """Every check's outcome on ``path``: run once per test session (across xdist workers), then cached."""
    shared = os.environ.get(SHARED_CACHE_VARIABLE)
    if not shared:
        return _run(path)
    cache = Path(shared)
    import fcntl
    import hashlib
    import pickle

    key = hashlib.sha256(
        path.read_bytes()
        + repr(sorted(CORPUS_SETTINGS.items())).encode()
        + repr(path.name in THOROUGH).encode()
    ).hexdigest()[:16]
    stored = cache / f"{path.stem}-{key}.pickle"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{path.stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the first run instead of repeating it
        if stored.exists():
            return pickle.loads(stored.read_bytes())
        result = _run(path)
        stored.write_bytes(pickle.dumps(result))
        return result


def fired(path: Path) -> dict[str, Outcome]:
    """The checks that reported something (an error or a warning) on ``path``."""
    return {o.check_id: o for o in outcomes(path) if o.status in (Status.FAILED, Status.WARNED)}


_VOLATILE = [
    # the checkout first: CI clones the repo into a folder that may itself be under /tmp
    (re.compile(re.escape(str(ROOT))), "<repo>"),
    # the scratch cwd _run gives each env mirrors the checkout (its entries linked), so it stands for it
    (re.compile(r"/[^\s'\"),]*?corpus-cwd-[^/\s'\"),]+"), "<repo>"),
    (re.compile(r"/(?:tmp|var/folders)/[^\s'\"),]+"), "<tmp>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"\b\d+\.\d+ s\b"), "<t> s"),
    (re.compile(r"\b0\.\d{5,}\b"), "<float>"),
    (re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"probe-[\w-]+-[0-9a-f]{8}"), "probe-<id>"),
    (re.compile(r"eval-\d+-\d+"), "eval-<id>"),
    (re.compile(r"\.py:\d+"), ".py:<line>"),
    # HC206 on a split drawn by the unseeded global random: which items and how many move differs run to run
    (re.compile(r"\d+ of the \d+ training prompts"), "<n> of the <m> training prompts"),
    (re.compile(r"PYTHONHASHSEED=\d+"), "PYTHONHASHSEED=<seed>"),
    (re.compile(r"\(first: .*?\)\. After a restart"), "(first: <prompt>). After a restart"),
    (re.compile(r"\b(atroposlib|transformers) \d+(?:\.\d+)+(?:[a-z]+\d*)?"), r"\1 <version>"),
    (re.compile(r"\(\w+\.py:\d+\)"), "(<file>:<line>)"),
]


def normalized(text: str) -> str:
    """``text`` with paths, ports, timings, uuids and line numbers replaced by placeholders."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text
