"""Score transcripts with the env's reward in other interpreters, under other hash seeds (HC404).

A reward that iterates a set of strings (``list(set(words))``, ``max(set(xs), key=...)``) gives the same score
twice in one process and a different one in the next: string hashing is salted per process (PYTHONHASHSEED).
The only way to see it is to run the reward again in a fresh interpreter with another seed. That costs an
import of the env, so it runs only when the reward's code (followed through the helpers it names) builds a set.

Run as ``python -m hermes_envs.conformance._hashseed ENV_FILE CLASS CASES.json OUT.json`` (the worker side; ``-`` for
CASES.json reads its path from stdin once the env is set up).
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["SEEDS", "Workers", "collect", "reward_set_use", "set_order", "start_workers"]

#: The hash seeds of the two other interpreters (this one has a random seed of its own).
SEEDS = (1, 2)
_SET_CALLS = {"set", "frozenset", "hash"}


def _defs(module_tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level functions, classes and assignments by name."""
    out: dict[str, ast.AST] = {}
    for node in module_tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node
    return out


def _set_use(node: ast.AST) -> str | None:
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Set, ast.SetComp)):
            return "a set literal or comprehension"
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in _SET_CALLS:
            return f"{inner.func.id}(...)"
    return None


def reward_set_use(module: ModuleType, env_cls: type[Any]) -> str | None:
    """Where the reward's code builds a set (``"set(...) in grade()"``), following names it uses, or None."""
    try:
        tree = ast.parse(Path(inspect.getsourcefile(module) or "").read_text(encoding="utf-8"))
        method = inspect.getsource(env_cls.compute_reward)
    except (OSError, TypeError, SyntaxError):
        return None
    defs = _defs(tree)
    methods: dict[str, ast.AST] = {}
    for cls in inspect.getmro(env_cls):
        if cls.__module__ != module.__name__:
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        except (OSError, TypeError, SyntaxError):
            continue
        for node in getattr(body, "body", []):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.setdefault(node.name, node)
    queue: list[tuple[str, ast.AST]] = [("compute_reward", ast.parse(textwrap.dedent(method)))]
    seen: set[str] = {"compute_reward"}
    while queue:
        name, node = queue.pop()
        found = _set_use(node)
        if found:
            return f"{found} in {name}()"
        for inner in ast.walk(node):
            ref = (
                inner.id
                if isinstance(inner, ast.Name)
                else inner.attr
                if isinstance(inner, ast.Attribute)
                else None
            )
            if ref and ref not in seen and (ref in defs or ref in methods):
                seen.add(ref)
                queue.append((ref, defs.get(ref) or methods[ref]))
    return None


def start_workers(path: Path, class_name: str, cases: list[dict[str, Any]], folder: Path) -> Workers:
    """Start one worker interpreter per seed and hand it ``cases`` at once; returns the handle for :func:`collect`."""
    workers = Workers(path, class_name, folder)
    workers.send(cases)
    return workers


def collect(workers: Workers, timeout: float = 120.0) -> dict[int, list[Any]]:
    """Seed -> the scores the worker gave (a float, or the error as a str); a worker that failed is left out."""
    return workers.collect(timeout)


class Workers:
    """One worker interpreter per seed, started before its cases exist: each imports the env and runs setup() (the
    ~5 s of CPU an interpreter pays for atroposlib) while the kit goes on, then waits on its stdin for the cases.

    HC404 starts them as the session's checks begin (its ``prepare`` hook) and :meth:`send` hands them the cases
    when it gets there; the scores are those of workers started at that point, as each worker scores only what it
    is sent, after its own setup(). Workers never sent cases are told to stop (:meth:`close`) and exit cleanly.
    """

    def __init__(self, path: Path, class_name: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.sent = False
        self._procs: list[tuple[int, subprocess.Popen[bytes], Path]] = []
        for seed in SEEDS:
            out = folder / f"scores-{seed}.json"
            env = dict(os.environ, PYTHONHASHSEED=str(seed))
            # stderr to a file, never a pipe nobody reads: a worker whose env logs a lot would block on a full pipe.
            with (folder / f"stderr-{seed}.txt").open("wb") as err:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "hermes_envs.conformance._hashseed",
                        str(path),
                        class_name,
                        "-",
                        str(out),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                    env=env,
                    cwd=str(path.parent),
                )
            self._procs.append((seed, proc, out))

    def send(self, cases: list[dict[str, Any]]) -> None:
        """Hand every worker ``cases`` (once): each scores them when its setup() is done."""
        infile = self.folder / "cases.json"
        infile.write_text(json.dumps(cases, default=repr), encoding="utf-8")
        self.sent = True
        for _seed, proc, _out in self._procs:
            if proc.stdin is None:  # pragma: no cover - always a pipe
                continue
            try:
                proc.stdin.write(f"{infile}\n".encode())
                proc.stdin.close()
            except OSError:  # the worker is gone already: collect() leaves it out
                pass

    def collect(self, timeout: float = 120.0) -> dict[int, list[Any]]:
        """Seed -> the scores the worker gave (a float, or the error as a str); a worker that failed is left out."""
        scores: dict[int, list[Any]] = {}
        for seed, proc, out in self._procs:
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                continue
            if proc.returncode == 0 and out.is_file():
                scores[seed] = json.loads(out.read_text(encoding="utf-8"))
        return scores

    def close(self, timeout: float = 60.0) -> None:
        """Stop workers still running. One never sent cases (HC404 found its answer in this process, or did not
        run) is asked to stop (SIGTERM: it unwinds as an exit does, its session and sandboxes cleaned up) rather
        than left to finish its import for nothing; one that has not exited within ``timeout`` is killed."""
        for _seed, proc, _out in self._procs:
            if proc.poll() is not None:
                continue
            if not self.sent:
                with contextlib.suppress(OSError):
                    proc.terminate()
            if proc.stdin is not None and not proc.stdin.closed:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _stop_on_sigterm() -> None:
    """A waiting worker told to stop (:meth:`Workers.close`) exits as on ``sys.exit(0)``: the ``with`` blocks unwind
    (the session closes, sandboxes are removed) and ``atexit`` runs; a second signal during that is ignored."""
    import signal

    def stop(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)


def _work(path: str, class_name: str, infile: str, outfile: str) -> None:
    """The worker: build the env as the session does, run setup(), score each case, write the scores. ``infile``
    ``-`` reads the cases file's path from stdin once setup() is done (the end of stdin: stop without scoring)."""
    import gc
    import uuid

    # The imports and setup() make ~160,000 objects that live until the worker exits: no collection while they
    # load, then frozen out of the collector's sight (~12% of a worker's CPU; the reward's own garbage is collected).
    gc.disable()
    if infile == "-":
        _stop_on_sigterm()
    from hermes_envs.agent.result import AgentResult
    from hermes_envs.conformance._observations.training import SetupRun
    from hermes_envs.conformance._session import EnvSession
    from hermes_envs.tools import ToolContext

    scores: list[Any] = []
    with EnvSession(path, class_name) as session:
        session.observe(SetupRun)
        gc.freeze()
        gc.enable()
        if infile == "-":
            infile = sys.stdin.readline().strip()
            if not infile:
                return
        cases = json.loads(Path(infile).read_text(encoding="utf-8"))
        for case in cases:
            result = AgentResult(
                messages=case["messages"],
                turns_used=case.get("turns_used", 1),
                finished_naturally=case.get("finished_naturally", True),
            )
            ctx = ToolContext(f"hashseed-{uuid.uuid4().hex[:8]}")
            try:
                score = session.run_env(
                    lambda env, result=result, ctx=ctx, item=case["item"]: env.compute_reward(
                        item, result, ctx
                    )
                )
                scores.append(float(score))
            except Exception as exc:  # the score is compared, the crash reported as text
                scores.append(f"{type(exc).__name__}: {exc}")
            finally:
                ctx.cleanup()
    Path(outfile).write_text(json.dumps(scores), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - run in a subprocess by start_workers
    _work(*sys.argv[1:5])


class _OrderedSet(set[Any]):
    """A set whose iteration order is fixed by the kit (sorted by repr, or the reverse): two orders a salted
    hash could give in two processes, played in this one."""

    reverse = False

    def __iter__(self) -> Iterator[Any]:
        return iter(sorted(set.__iter__(self), key=repr, reverse=self.reverse))


class _ReversedSet(_OrderedSet):
    reverse = True


class _OrderedFrozenSet(frozenset[Any]):
    reverse = False

    def __iter__(self) -> Iterator[Any]:
        return iter(sorted(frozenset.__iter__(self), key=repr, reverse=self.reverse))


class _ReversedFrozenSet(_OrderedFrozenSet):
    reverse = True


class set_order:
    """Within the block, ``set(...)`` / ``frozenset(...)`` called by the env module's code iterate in a fixed
    order (sorted, or reversed with ``reverse=True``): a reward whose score follows a set's order shows it by
    scoring the same transcript differently under the two orders, without another interpreter."""

    def __init__(self, module: ModuleType, reverse: bool) -> None:
        self.module = module
        self.reverse = reverse
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> set_order:
        names: dict[str, type] = {"set": (_ReversedSet if self.reverse else _OrderedSet)}
        names["frozenset"] = _ReversedFrozenSet if self.reverse else _OrderedFrozenSet
        for name, value in names.items():
            self._saved[name] = self.module.__dict__.get(name, _MISSING)
            setattr(self.module, name, value)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, value in self._saved.items():
            if value is _MISSING:
                self.module.__dict__.pop(name, None)
            else:
                setattr(self.module, name, value)


_MISSING = object()
