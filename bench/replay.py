"""Replay speed: rollouts/s of the example env replayed from a cassette vs against the live fake server.

Run: .venv/bin/python bench/replay.py [--items N] [--group-size G] [--rounds R]

Both sides run the env's own ``collect_trajectories`` (agent loop, terminal tool, reward, tokenization) through the
same runner (:func:`hermes_envs.testing.recording.run_rollouts`) in this process; only the model side differs:

- live: a FakeOpenAIServer (arithmetic policy) in a daemon thread on loopback, no cassette;
- replay: the cassette recorded from that server in the same run, server stopped, record mode ``none``.

Rounds interleave the two sides (the machine is shared); the ratio printed is the median of per-round ratios.
Target: replay >= 0.8x live.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_envs.demo import arithmetic_policy
from hermes_envs.testing.cassettes import parse_yaml
from hermes_envs.testing.fake_server import FakeOpenAIServer
from hermes_envs.testing.recording import Provider, run_rollouts

ENV = Path(__file__).resolve().parents[1] / "environments" / "arithmetic_env.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    kw = {"items": args.items, "group_size": args.group_size}
    cassette = Path(tempfile.mkdtemp(prefix="hermes-bench-")) / "replay.yaml"

    with FakeOpenAIServer(policy=arithmetic_policy) as srv:
        provider = Provider(srv.base_url, "fake", "x")
        run_rollouts(
            ENV, provider=provider, cassette=cassette, record_mode="rewrite", **kw
        )  # record + warm up
        live_rates, replay_rates, ratios = [], [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            live = run_rollouts(ENV, provider=provider, **kw)
            live_rate = live.rollouts / (time.perf_counter() - start)
            srv.stop()  # replay with no server at all
            parse_yaml.cache_clear()  # cold: each replay parses its cassette (as one test in CI would)
            start = time.perf_counter()
            replay = run_rollouts(ENV, cassette=cassette, **kw)
            replay_rate = replay.rollouts / (time.perf_counter() - start)
            srv.start()
            assert replay.rewards == live.rewards, (replay.rewards, live.rewards)
            assert not replay.cassette.misses, replay.cassette.misses[:1]
            live_rates.append(live_rate)
            replay_rates.append(replay_rate)
            ratios.append(replay_rate / live_rate)
    n = args.items * args.group_size
    print(
        f"{args.items} items x {args.group_size} rollouts = {n} rollouts per side, {args.rounds} rounds, same run"
    )
    print(f"live fake server : {statistics.median(live_rates):7.1f} rollouts/s (median)")
    print(f"cassette replay  : {statistics.median(replay_rates):7.1f} rollouts/s (median)")
    ratio = statistics.median(ratios)
    print(f"replay / live    : {ratio:7.2f}x (target >= 0.8x) {'OK' if ratio >= 0.8 else 'BELOW TARGET'}")
    return 0 if ratio >= 0.8 else 1


if __name__ == "__main__":
    sys.exit(main())
