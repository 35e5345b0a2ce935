"""`hermes-envs check` on one env vs a bare `import atroposlib.envs.base`, each in a fresh interpreter.

Run: .venv/bin/python bench/check.py [--rounds R] [--baseline REV] [--process] [ENV_FILE]

The floor is what any atroposlib env pays before it does anything: starting Python and importing atroposlib's
BaseEnv. The check does that too (it imports the env file) and then runs the whole catalogue. Rounds interleave the
two (the machine is shared); the ratio printed is the median of the per-round ratios. Target (issue 16): <= 1.5x.

Both run with bytecode caches, as an installed package does (pip compiles it; atroposlib's are in site-packages): a
PYTHONDONTWRITEBYTECODE=1 inherited from the shell would make only the check recompile its ~250 modules on every
run (about 0.1x of the floor). ``--no-bytecode`` measures that case.

The check's ``PATH`` starts with this interpreter's folder, as in an activated virtualenv: the example envs run
``python3`` in their sandboxes (file_task_env checks the agent's script that way, ~30 times per check), and where
``python3`` is a pyenv shim each start costs ~0.1 s of CPU in shell scripts before Python starts, more than the
check's own work. ``--path-as-is`` keeps the shell's ``PATH``.

``--baseline REV`` also times the check of an older commit in the same rounds (issue 29's budget: the check stays
within 1.5x of its time before the oracle work, b3ab50f, main just before h/oracles was merged). The bench checks
REV out with ``git worktree add`` in a temporary folder outside the repo, runs it with this interpreter and that
folder first on ``PYTHONPATH``, and removes the worktree at the end.

``--process`` also times the env's own one-step ``process`` run (``python ENV_FILE process``, group of 2, against a
fake model server in this process answering with the env module's ``policy`` function when it has one) in the same
rounds: issue 26's budget for an env with a slow reward is a check within 3x of that run
(``.venv/bin/python bench/check.py --process --baseline HEAD~1 bench/slow_reward_env.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
BASELINE_TARGET = 1.5
PROCESS_TARGET = 3.0


def timed(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: a check failed (a flaky finding still times the run)
        raise SystemExit(f"{argv} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env_file", nargs="?", default=str(ROOT / "environments" / "arithmetic_env.py"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE from the shell"
    )
    parser.add_argument("--path-as-is", action="store_true", help="keep PATH from the shell (see above)")
    parser.add_argument("--baseline", metavar="REV", help="also time the check at this commit (see above)")
    parser.add_argument(
        "--process", action="store_true", help="also time the env's own `process` run (see above)"
    )
    args = parser.parse_args()
    from hermes_envs.testing.offline import offline_environ

    env = {**os.environ, **offline_environ()}
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not args.path_as_is:
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", os.defpath)])
    env_file = os.path.relpath(Path(args.env_file).resolve(), ROOT)
    floor_argv = [sys.executable, "-c", "import atroposlib.envs.base"]
    check_argv = [sys.executable, "-m", "hermes_envs.cli", "check", env_file]
    load_before = _loadavg()
    with contextlib.ExitStack() as stack:
        runs: dict[str, tuple[list[str], dict[str, str], Path]] = {
            "floor": (floor_argv, env, ROOT),
            "check": (check_argv, env, ROOT),
        }
        if args.baseline:
            base = stack.enter_context(_worktree(args.baseline))
            base_env = {
                **env,
                "PYTHONPATH": os.pathsep.join([str(base), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            }
            absolute = [*check_argv[:-1], str(ROOT / env_file)]  # the env file may not exist at REV
            runs["base"] = (absolute, base_env, base)
        if args.process:
            server = stack.enter_context(_fake_server(ROOT / env_file))
            out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermes_check_process_")))
            from hermes_envs.testing._process_run import process_command

            runs["process"] = (process_command(env_file, out / "groups.jsonl", server.base_url), env, ROOT)
        for argv, run_env, cwd in runs.values():  # warm the OS file cache (and write the bytecode)
            timed(argv, run_env, cwd)
        walls: dict[str, list[float]] = {name: [] for name in runs}
        cpus: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, (argv, run_env, cwd) in runs.items():
                wall, cpu = timed(argv, run_env, cwd)
                walls[name].append(wall)
                cpus[name].append(cpu)

    def ratio(top: str, bottom: str, values: dict[str, list[float]]) -> str:
        per_round = [a / b for a, b in zip(values[top], values[bottom], strict=True)]
        return f"{statistics.median(per_round):.2f}x (range {min(per_round):.2f}-{max(per_round):.2f})"

    name = Path(args.env_file).name
    print(f"bare `import atroposlib.envs.base`: median {statistics.median(walls['floor']):.2f} s")
    print(f"hermes-envs check {name}: median {statistics.median(walls['check']):.2f} s")
    print(
        f"check / import: {ratio('check', 'floor', walls)} wall, median of {args.rounds} rounds; target <= {TARGET}x"
    )
    print(f"check / import: {ratio('check', 'floor', cpus)} CPU (user+system; steadier on a busy machine)")
    if args.baseline:
        print(f"check at {args.baseline}: median {statistics.median(walls['base']):.2f} s")
        print(
            f"baseline check / import: {ratio('base', 'floor', walls)} wall, {ratio('base', 'floor', cpus)} CPU"
        )
        print(
            f"check / check at {args.baseline}: {ratio('check', 'base', walls)} wall, "
            f"{ratio('check', 'base', cpus)} CPU; target <= {BASELINE_TARGET}x"
        )
    if args.process:
        print(f"env's own process run: median {statistics.median(walls['process']):.2f} s")
        print(
            f"check / process: {ratio('check', 'process', walls)} wall, {ratio('check', 'process', cpus)} CPU; "
            f"target <= {PROCESS_TARGET}x"
        )
        if args.baseline:
            print(
                f"check at {args.baseline} / process: {ratio('base', 'process', walls)} wall, "
                f"{ratio('base', 'process', cpus)} CPU"
            )
    print(f"load average (1 min) {load_before} before, {_loadavg()} after ({os.cpu_count()} CPUs)")
    print(
        f"bytecode caches {'off' if args.no_bytecode else 'on'}; sandbox python3 "
        f"{'from the shell PATH' if args.path_as_is else 'this interpreter (as in an activated venv)'}"
    )
    return 0


@contextlib.contextmanager
def _worktree(rev: str) -> Iterator[Path]:
    """A detached checkout of ``rev`` in a temporary folder outside the repo, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="hermes_check_base_")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(folder), rev], cwd=ROOT, check=True, capture_output=True
    )
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=False)
        subprocess.run(["rm", "-rf", str(folder.parent)], check=False)


@contextlib.contextmanager
def _fake_server(env_file: Path) -> Iterator[Any]:
    """A fake model server for the env's ``process`` run: the env module's ``policy`` when it defines one."""
    import importlib.util

    from hermes_envs.testing.fake_server import FakeOpenAIServer

    spec = importlib.util.spec_from_file_location("_bench_env_under_test", env_file)
    policy = None
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        policy = getattr(module, "policy", None)
    with FakeOpenAIServer(policy=policy, strict=False) as server:
        yield server


def _loadavg() -> str:
    """The 1-minute load average: ratios from a machine busier than its CPU count drift (the floor too)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover - not available on this platform
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
