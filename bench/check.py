"""`hermes-envs check` on one env vs a bare `import atroposlib.envs.base`, each in a fresh interpreter.

Run: .venv/bin/python bench/check.py [--rounds R] [ENV_FILE]

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
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
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
    args = parser.parse_args()
    from hermes_envs.testing.offline import offline_environ

    env = {**os.environ, **offline_environ()}
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not args.path_as_is:
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", os.defpath)])
    floor_argv = [sys.executable, "-c", "import atroposlib.envs.base"]
    check_argv = [sys.executable, "-m", "hermes_envs.cli", "check", args.env_file]
    load_before = _loadavg()
    timed(floor_argv, env)  # warm the OS file cache for both (and write the check's bytecode)
    timed(check_argv, env)
    floors, checks, ratios, cpu_ratios = [], [], [], []
    for _ in range(args.rounds):
        (floor, floor_cpu), (check, check_cpu) = timed(floor_argv, env), timed(check_argv, env)
        floors.append(floor)
        checks.append(check)
        ratios.append(check / floor)
        cpu_ratios.append(check_cpu / floor_cpu)
    ratio = statistics.median(ratios)
    print(f"bare `import atroposlib.envs.base`: median {statistics.median(floors):.2f} s")
    print(f"hermes-envs check {Path(args.env_file).name}: median {statistics.median(checks):.2f} s")
    print(f"check / import ratio: {ratio:.2f}x wall (median of {args.rounds} rounds; target <= {TARGET}x)")
    print(
        f"check / import ratio: {statistics.median(cpu_ratios):.2f}x CPU (user+system; steadier on a busy machine)"
    )
    print(f"load average (1 min) {load_before} before, {_loadavg()} after ({os.cpu_count()} CPUs)")
    print(
        f"bytecode caches {'off' if args.no_bytecode else 'on'}; sandbox python3 "
        f"{'from the shell PATH' if args.path_as_is else 'this interpreter (as in an activated venv)'}"
    )
    return 0


def _loadavg() -> str:
    """The 1-minute load average: ratios from a machine busier than its CPU count drift (the floor too)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover - not available on this platform
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
