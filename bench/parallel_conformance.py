"""When does `pytest -n 2 --hermes-conformance` beat a serial run? Wall time of both on the same envs, interleaved.

Run: .venv/bin/python bench/parallel_conformance.py [--rounds R] [--slow]

Two sets: the three example envs under environments/, and every correct env of our corpus (conformance/good/).
Each round runs serial then parallel (the order alternates between rounds, the machine is shared); the figure
printed is the median per set, with the load average seen. docs/ci.md quotes these figures ("When parallel pays
off"): a worker is a fresh interpreter that imports atroposlib and collects every env file again, so parallel only
wins once the envs' own check time is several times that start-up.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["environments/arithmetic_env.py", "environments/file_task_env.py", "environments/judge_env.py"]


def corpus_good() -> list[str]:
    """The corpus's correct envs (files starting with ``_`` are shared bases, not envs)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "conformance" / "good").glob("[!_]*.py"))


def run(files: list[str], parallel: bool, slow: bool) -> float:
    """Wall seconds of one conformance run over ``files``; exits when the run fails (a failed run is no figure)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if parallel:
        argv += ["-n", "2", "--dist", "loadscope"]
    if slow:
        argv.append("--hermes-slow")
    argv += ["--hermes-conformance", *files]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slow", action="store_true", help="add --hermes-slow (a process run per env)")
    args = parser.parse_args()
    for label, files in (("3 examples", EXAMPLES), (f"{len(corpus_good())} corpus good envs", corpus_good())):
        serial: list[float] = []
        parallel: list[float] = []
        for r in range(args.rounds):
            for par in (r % 2 == 1, r % 2 == 0):
                (parallel if par else serial).append(run(files, par, args.slow))
        load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
        s, p = statistics.median(serial), statistics.median(parallel)
        print(
            f"{label:>24}: serial {s:5.1f} s   -n 2 {p:5.1f} s   parallel/serial {p / s:4.2f}x   (load {load})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
